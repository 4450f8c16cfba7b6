//! `agents web`: serve the web view, or manage the tokens of the devices
//! that open it (`agents web tokens add|ls|rm`).

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::paths::Paths;
use crate::web::tokens;

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct WebArgs {
    #[command(subcommand)]
    pub command: Option<WebCommand>,
    /// ADDR:PORT to listen on (default 127.0.0.1:7878; port 0 picks a
    /// free one). Beyond loopback without TLS the traffic is unencrypted:
    /// prefer an SSH tunnel or a reverse proxy with TLS.
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    /// Also answer the page at this address (`https://agents.example.org`):
    /// a reverse proxy's, which the browser names as the page's origin.
    #[arg(long = "origin", value_name = "URL")]
    pub origins: Vec<String>,
    /// Serve HTTPS with this certificate chain (PEM); needs --tls-key.
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Print `{"url": …, "token": …}` as the first line instead.
    #[arg(long)]
    pub json: bool,
    /// Served for the daemon (`[web] listen`): device tokens only, and
    /// `{"url": …}` as the first line.
    #[arg(long, hide = true)]
    pub for_daemon: bool,
}

#[derive(Subcommand, Debug)]
pub enum WebCommand {
    /// The tokens of the devices that open the web view: one each, shown
    /// once, kept only as a hash.
    Tokens {
        #[command(subcommand)]
        command: TokensCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum TokensCommand {
    /// Make a token for a device (a phone, a laptop) and print it, once.
    Add {
        /// The device's name: letters, digits, '-', '_', '.'.
        name: String,
        /// Print `{"name": …, "token": …}` instead.
        #[arg(long)]
        json: bool,
    },
    /// The devices that have a token.
    Ls {
        /// One JSON array of `{name, created_at}`.
        #[arg(long)]
        json: bool,
    },
    /// Revoke a device's token: refused from its next request on.
    Rm {
        /// The device's name, as `agents web tokens ls` lists it.
        name: String,
        /// Print `{"removed": NAME}` instead.
        #[arg(long)]
        json: bool,
    },
}

pub async fn web(paths: &Paths, args: WebArgs) -> Result<i32> {
    let Some(WebCommand::Tokens { command }) = args.command else {
        let options = crate::web::Options {
            listen: args.listen,
            origins: args.origins,
            tls: args.tls_cert.zip(args.tls_key),
            json: args.json,
            for_daemon: args.for_daemon,
        };
        return crate::web::serve(paths.clone(), options).await;
    };
    match command {
        TokensCommand::Add { name, json } => {
            let token = tokens::add(paths, &name)?;
            // The daemon's web view ([web] listen), when it serves one.
            let served = match crate::client::Client::connect_existing(paths, false).await {
                Ok(client) => client
                    .call::<crate::api::method::DaemonStatus>(crate::api::NoParams)
                    .await
                    .ok()
                    .and_then(|status| status.web),
                Err(_) => None,
            };
            let url = served.map(|base| format!("{base}#token={token}"));
            if json {
                println!("{}", serde_json::json!({ "name": name, "token": token, "url": url }));
            } else {
                println!("{}", url.as_deref().unwrap_or(&token));
                let how = match url {
                    Some(_) => "open it on that device".to_string(),
                    None => format!("open the web view's address with #token={token} after it"),
                };
                eprintln!("the token of {name}, shown this once: {how} (agents web tokens rm {name} revokes it)");
            }
        }
        TokensCommand::Ls { json } => {
            let devices = tokens::list(paths)?;
            if json {
                let shown: Vec<_> = devices
                    .iter()
                    .map(|d| serde_json::json!({ "name": d.name, "created_at": d.created_at }))
                    .collect();
                println!("{}", serde_json::Value::from(shown));
            } else if devices.is_empty() {
                println!("no web tokens (agents web tokens add NAME makes one)");
            } else {
                println!("{:<24} CREATED", "NAME");
                for d in devices {
                    println!("{:<24} {}", d.name, d.created_at);
                }
            }
        }
        TokensCommand::Rm { name, json } => {
            tokens::remove(paths, &name)?;
            match json {
                true => println!("{}", serde_json::json!({ "removed": name })),
                false => println!("removed the web token of {name}"),
            }
        }
    }
    Ok(0)
}
