//! What the reader benchmarks (`trace_scan`, `timeline_scan`) share: the
//! command line (`[--repeat R] [--OPTION VALUE]... FILE...`), best-of-R
//! timing in wall and CPU seconds, the result line and the `read()` floor
//! (docs/benchmarks.md#the-json-trace-scanner).

use std::fs::File;
use std::io::Read;
use std::time::Instant;

fn cpu_seconds() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let t = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    t(usage.ru_utime) + t(usage.ru_stime)
}

/// One benchmark run: its inputs, rounds and total size.
pub struct Bench {
    pub files: Vec<String>,
    pub repeat: usize,
    mb: f64,
}

impl Bench {
    /// Reads the command line; `extra` names the options besides
    /// `--repeat` (each takes a value), whose values are returned.
    pub fn from_args(tool: &str, extra: &[&str]) -> (Bench, Vec<(String, String)>) {
        let mut args: Vec<String> = std::env::args().skip(1).collect();
        let mut repeat = 2;
        let mut options = Vec::new();
        while args.len() > 1 && args[0].starts_with("--") {
            match args[0].as_str() {
                "--repeat" => repeat = args[1].parse().expect("--repeat N"),
                o if extra.contains(&o) => options.push((o.to_string(), args[1].clone())),
                other => panic!("unknown option {other}"),
            }
            args.drain(..2);
        }
        if args.is_empty() {
            eprintln!("usage: {tool} [--repeat R] FILE...");
            std::process::exit(2);
        }
        let bytes: u64 = args
            .iter()
            .map(|p| std::fs::metadata(p).expect("input").len())
            .sum();
        let bench = Bench {
            files: args,
            repeat,
            mb: bytes as f64 / 1e6,
        };
        println!(
            "input: {} files, {:.0} MB; best of {repeat} rounds",
            bench.files.len(),
            bench.mb
        );
        (bench, options)
    }

    /// Runs `f` `repeat` times; returns the best wall and best CPU seconds
    /// and `f`'s (last) result.
    pub fn best<T>(&self, mut f: impl FnMut() -> T) -> (f64, f64, T) {
        let (mut wall, mut cpu) = (f64::MAX, f64::MAX);
        let mut out = None;
        for _ in 0..self.repeat {
            let (w0, c0) = (Instant::now(), cpu_seconds());
            out = Some(f());
            wall = wall.min(w0.elapsed().as_secs_f64());
            cpu = cpu.min(cpu_seconds() - c0);
        }
        (wall, cpu, out.expect("at least one round"))
    }

    /// Prints one result line: seconds and MB/s, wall and CPU.
    pub fn line(&self, label: &str, wall: f64, cpu: f64) {
        println!(
            "{label:<34} {wall:7.2} s {:8.1} MB/s | cpu {cpu:7.2} s {:8.1} MB/cpu-s",
            self.mb / wall,
            self.mb / cpu
        )
    }

    /// The floor: the files `read` into a 1 MiB buffer and dropped; printed,
    /// and its wall seconds returned.
    pub fn floor(&self) -> f64 {
        let (wall, cpu, _) = self.best(|| {
            let mut buf = vec![0u8; 1 << 20];
            for p in &self.files {
                let mut f = File::open(p).expect("input");
                while f.read(&mut buf).expect("read") > 0 {}
            }
        });
        self.line("floor: read() into 1 MiB, dropped", wall, cpu);
        wall
    }
}
