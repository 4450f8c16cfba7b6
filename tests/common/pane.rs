//! A screen subscription as a TUI pane holds one, for tests and benches.

/// A screen subscription as a pane has one: every update applied to a
/// mirror of the screen and acknowledged, so the next one comes.
pub struct Pane {
    client: agents::client::Client,
    events: tokio::sync::mpsc::Receiver<agents::protocol::Frame>,
    run: String,
    screen: agents::protocol::screen::ScreenMirror,
    /// Updates applied so far.
    pub updates: usize,
}

impl Pane {
    pub async fn open(home: &std::path::Path, run: &str) -> Pane {
        let paths = agents::paths::Paths::at(home.to_path_buf());
        let mut client = agents::client::Client::connect_existing(&paths, true)
            .await
            .expect("connect to the local daemon");
        let events = client.events.take().expect("events were asked for");
        let attach = agents::api::AttachParams {
            run: run.to_string(),
            screen: true,
            ..Default::default()
        };
        client
            .call::<agents::api::method::RunsAttach>(attach)
            .await
            .expect("a screen subscription");
        Pane {
            client,
            events,
            run: run.to_string(),
            screen: agents::protocol::screen::ScreenMirror::new(1, 1, 0),
            updates: 0,
        }
    }

    /// Applies updates until the screen shows `text`; then `then` is read.
    pub async fn until_shows<T>(&mut self, text: &str, mut then: impl FnMut() -> T) -> T {
        let deadline = tokio::time::Instant::now() + super::PATIENCE;
        loop {
            if self.screen.visible_lines().iter().any(|l| l.contains(text)) {
                return then();
            }
            let frame = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("the pane shows {text:?}: it shows {:?}", self.screen.visible_lines()))
                .expect("the daemon kept the connection");
            if let agents::protocol::Frame::Screen { run, bytes, .. } = frame
                && run == self.run
            {
                let update = agents::protocol::screen::ScreenUpdate::decode(&bytes).expect("an update decodes");
                self.screen.apply(update).expect("an update applies");
                self.updates += 1;
                let ack = agents::api::AckParams {
                    run,
                    offset: self.screen.seq,
                    screen: true,
                    sub: 0,
                };
                self.client
                    .notify::<agents::api::method::RunsAck>(ack)
                    .await
                    .expect("ack");
            }
        }
    }
}
