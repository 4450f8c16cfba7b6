fn main() {
    std::process::exit(agents::cli::main());
}
