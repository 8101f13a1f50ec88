//! Real generation with SmolLM2-135M (98 MB; fetched through the models machinery when it
//! is not installed yet).

use std::future::Future;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll, Wake, Waker};

use rhizome_core::llm::{ChatMessage, ChatProvider, ChatRequest, ChatResponse, TokenSink};
use rhizome_core::Error;
use rhizome_llm_local::{bench, LocalChat, LocalOptions};
use rhizome_models as models;

/// A minimal executor: polls on this thread, parking while pending.
fn block_on<F: Future>(fut: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    loop {
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(v) => return v,
            Poll::Pending => std::thread::park(),
        }
    }
}

fn chat() -> &'static LocalChat {
    static CHAT: OnceLock<LocalChat> = OnceLock::new();
    CHAT.get_or_init(|| {
        let dir = models::models_dir();
        let path = models::fetch(&models::SMOLLM2_135M, &dir).expect("fetch smollm2-135m");
        let gguf = path.join(models::LLM_FILE);
        let head = std::fs::read(&gguf).map(|b| b[..4].to_vec()).unwrap();
        assert_eq!(head, b"GGUF");
        // One thread: llama.cpp's threads spin-wait on each other, which is slow on a machine
        // busy with other work (tests run beside builds); one thread never waits.
        let opts = LocalOptions { threads: Some(1), ..LocalOptions::default() };
        LocalChat::load_installed("smollm2-135m", &dir, opts).expect("load")
    })
}

fn req(user: &str, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::system("You are a helpful assistant."), ChatMessage::user(user)],
        max_tokens: Some(max_tokens),
        ..ChatRequest::default()
    }
}

fn run(r: &ChatRequest) -> ChatResponse {
    block_on(chat().chat(r, None)).expect("chat")
}

#[test]
fn says_hello_with_sane_usage() {
    let c = chat();
    assert_eq!(c.id(), "local/smollm2-135m");
    let r = run(&req("Reply with the word hello.", 32));
    assert!(!r.text.trim().is_empty(), "{r:?}");
    assert!(r.text.to_lowercase().contains("hello"), "{r:?}");
    assert!((10..100).contains(&r.usage.prompt_tokens), "{r:?}");
    assert!((1..=32).contains(&r.usage.completion_tokens), "{r:?}");
    assert!(!r.cached);
    // The end-of-turn marker is a control token: never part of the text.
    assert!(!r.text.contains("<|im_end|>"), "{r:?}");
}

#[test]
fn streamed_pieces_make_the_text() {
    // `TokenSink` is `dyn Fn + 'static`: the collected pieces are shared through an `Arc`.
    let pieces = Arc::new(Mutex::new(Vec::<String>::new()));
    let p = pieces.clone();
    let sink = move |s: &str| p.lock().unwrap().push(s.to_string());
    let r = block_on(chat().chat(&req("Name three colours.", 40), Some(&sink as &TokenSink))).unwrap();
    let pieces = pieces.lock().unwrap().clone();
    assert!(pieces.len() > 1, "{pieces:?}");
    assert!(pieces.iter().all(|p| !p.is_empty()));
    assert_eq!(pieces.concat(), r.text);
}

#[test]
fn greedy_is_deterministic() {
    let r = req("Write one sentence about rivers.", 40);
    let a = run(&r);
    let b = run(&r);
    assert_eq!(a, b);
    // Sampled with a seed: also reproducible, and still valid output.
    let sampled = ChatRequest { temperature: 0.8, seed: Some(7), ..r };
    let (c, d) = (run(&sampled), run(&sampled));
    assert_eq!(c.text, d.text);
    assert!(c.usage.completion_tokens >= 1);
}

#[test]
fn max_tokens_is_honoured() {
    let r = run(&req("Write a long story about a dragon and a knight.", 5));
    assert_eq!(r.usage.completion_tokens, 5, "{r:?}");
    assert!(!r.text.is_empty());
    let none = run(&req("Write a long story.", 0));
    assert_eq!((none.text.as_str(), none.usage.completion_tokens), ("", 0));
}

#[test]
fn stop_string_cuts_the_text() {
    let base = req("List the days of the week, one per line.", 60);
    let full = run(&base);
    // Stop at a piece of text the model is known (greedily) to produce mid-answer.
    let words: Vec<&str> = full.text.split_whitespace().collect();
    assert!(words.len() >= 3, "{full:?}");
    let stop = words[words.len() / 2].to_string();
    let at = full.text.find(&stop).unwrap();
    let pieces = Arc::new(Mutex::new(String::new()));
    let p = pieces.clone();
    let sink = move |s: &str| p.lock().unwrap().push_str(s);
    let with_stop = ChatRequest { stop: vec!["@@never@@".into(), stop.clone()], ..base };
    let cut = block_on(chat().chat(&with_stop, Some(&sink as &TokenSink))).unwrap();
    assert_eq!(cut.text, full.text[..at], "stop {stop:?}");
    assert_eq!(*pieces.lock().unwrap(), cut.text, "no part of the stop string is streamed");
    assert!(cut.usage.completion_tokens < full.usage.completion_tokens);
}

#[test]
fn json_mode_yields_json() {
    let r = ChatRequest {
        json_mode: true,
        ..req("Give a JSON object with keys \"name\" and \"age\" for a person called Ann aged 30.", 80)
    };
    let out = run(&r);
    assert!(out.text.starts_with('{'), "{out:?}");
    // It finished on its own, and the grammar allows nothing but one complete object.
    assert!(out.usage.completion_tokens < 80, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.text).expect("valid JSON");
    assert_eq!(v["age"], 30, "{out:?}");
    // Even a request for prose yields JSON (cut by max_tokens here, so not parsed).
    let poem = run(&ChatRequest { json_mode: true, ..req("Write a poem about the sea.", 12) });
    assert!(poem.text.starts_with('{'), "{poem:?}");
}

#[test]
fn too_long_prompt_is_a_clear_error() {
    let long = "word ".repeat(6000);
    let err = block_on(chat().chat(&req(&long, 8), None)).unwrap_err();
    match &err {
        Error::Llm { provider, msg } => {
            assert_eq!(provider, "local/smollm2-135m");
            assert!(msg.contains("context"), "{msg}");
        }
        other => panic!("unexpected error {other}"),
    }
    // The model is still usable afterwards.
    assert!(!run(&req("Say hi.", 8)).text.is_empty());
}

#[test]
fn odd_inputs_do_not_panic() {
    for messages in [
        vec![],
        vec![ChatMessage::user("")],
        vec![ChatMessage::user("nul\0byte and <|im_end|> marker")],
        vec![ChatMessage::assistant("only an assistant turn")],
        vec![ChatMessage::user("emoji 😀🎉 and 漢字, RTL עברית")],
    ] {
        let r = ChatRequest { messages, max_tokens: Some(6), ..ChatRequest::default() };
        let out = block_on(chat().chat(&r, None)).expect("chat");
        assert!(out.usage.prompt_tokens > 0 && out.usage.completion_tokens <= 6, "{out:?}");
    }
}

#[test]
fn concurrent_calls_are_serialised() {
    let r = req("Say one word.", 8);
    let expected = run(&r);
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..3).map(|_| s.spawn(|| run(&r))).collect();
        for h in hs {
            assert_eq!(h.join().unwrap(), expected);
        }
    });
}

#[test]
fn bench_reports_speeds() {
    let rep = bench(chat(), 64, 8).unwrap();
    assert_eq!((rep.prompt_tokens, rep.gen_tokens), (64, 8));
    assert!(rep.prompt_tok_per_s > 0.0 && rep.gen_tok_per_s > 0.0, "{rep:?}");
    assert!(rep.threads >= 1 && rep.n_ctx >= 72);
    let json = serde_json::to_value(&rep).unwrap();
    assert_eq!(json["model"], "local/smollm2-135m");
    assert!(bench(chat(), 0, 8).is_err());
    assert!(bench(chat(), 1_000_000, 8).is_err());
}
