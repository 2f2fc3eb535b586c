//! A trace sink that writes down every call the trace source makes, for
//! the fuzz exercises that compare two reads of the same trace
//! (`kineto_json`, `gzip_trace`).

use std::io;

use unitrace_core::timeline::{
    CounterSample, DeviceOp, Dropped, FlowPoint, HostSpan, Mark, Names, OtherSpan, RankSlot,
    RunInfo, TraceSink,
};

#[derive(Default)]
pub struct Recorder {
    pub calls: Vec<String>,
}

impl TraceSink for Recorder {
    fn process(&mut self, rank: RankSlot, pid: u64, name: &str) {
        self.calls.push(format!("process {rank:?} {pid} {name:?}"));
    }
    fn thread(&mut self, rank: RankSlot, pid: u64, tid: u64, name: &str) {
        self.calls
            .push(format!("thread {rank:?} {pid} {tid} {name:?}"));
    }
    fn run_info(&mut self, info: &RunInfo) {
        self.calls.push(format!("run_info {info:?}"));
    }
    fn device(&mut self, rank: RankSlot, pid: u64, label: &str) {
        self.calls.push(format!("device {rank:?} {pid} {label:?}"));
    }
    fn device_op(&mut self, names: &Names, op: &DeviceOp) -> io::Result<()> {
        assert!(
            op.end >= op.start,
            "a device op ends before it starts: {op:?}"
        );
        let _ = names.info(op.name);
        self.calls.push(format!("device_op {op:?}"));
        Ok(())
    }
    fn host_span(&mut self, names: &Names, span: &HostSpan<'_>) -> io::Result<()> {
        assert!(
            span.end >= span.start,
            "a host span ends before it starts: {span:?}"
        );
        let _ = names.info(span.name);
        self.calls.push(format!("host_span {span:?}"));
        Ok(())
    }
    fn other_span(&mut self, _names: &Names, span: &OtherSpan) -> io::Result<()> {
        self.calls.push(format!("other_span {span:?}"));
        Ok(())
    }
    fn flow(&mut self, flow: &FlowPoint) {
        self.calls.push(format!("flow {flow:?}"));
    }
    fn counter(&mut self, sample: &CounterSample<'_>) {
        self.calls.push(format!("counter {sample:?}"));
    }
    fn mark(&mut self, mark: &Mark) {
        self.calls.push(format!("mark {mark:?}"));
    }
    fn dropped(&mut self, dropped: &Dropped<'_>) {
        self.calls.push(format!("dropped {dropped:?}"));
    }
}
