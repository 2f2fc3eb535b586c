//! The console report: one section per table, headed in plain words
//! (docs/tracestat.md#console-report).

use std::io::{self, Write};

use crate::rank_rows::{self, Shown};
use crate::report::Report;

/// At most this many rows of the long tables (all rows are in CSV/JSON).
const TOP: usize = 15;

/// The console heatmap: at most this many columns and rows (more bins are
/// averaged into a column, more ranks into a row).
const HEAT_COLUMNS: usize = 64;
const HEAT_ROWS: usize = 16;

/// Idle to busy, one character per tenth.
const HEAT_RAMP: &[u8] = b" .:-=+*#%@";

/// The console report; `rank_rows` caps the ranks of the per-rank tables
/// (`None`: every rank; docs/tracestat.md#console-report).
pub fn write(out: &mut impl Write, r: &Report, rank_rows: Option<usize>) -> io::Result<()> {
    writeln!(
        out,
        "tracestat: {} rank{}",
        r.ranks,
        if r.ranks == 1 { "" } else { "s" }
    )?;
    if let Some((straggler, comparison)) = crate::report::straggler_lines(r) {
        writeln!(out, "straggler: {straggler}")?;
        writeln!(out, "GPU time against the median: {comparison}")?;
    }
    let shown = rank_rows::choose(r, rank_rows);
    shown_ranks(out, &shown)?;

    writeln!(out, "\nWhere the time went (share of each rank's wall time; a moment counts once: compute > communication > memory > idle)")?;
    writeln!(
        out,
        "{:>6} {:>12} {:>7} {:>9} {:>9} {:>9} {:>9}  device",
        "rank", "wall_ms", "busy_%", "compute_%", "comm_%", "memory_%", "idle_%"
    )?;
    for b in r.breakdown.iter().filter(|b| shown.contains(&b.rank)) {
        writeln!(
            out,
            "{:>6} {:>12.3} {:>7.2} {:>9.2} {:>9.2} {:>9.2} {:>9.2}  {}",
            b.rank,
            b.wall_us / 1e3,
            b.busy_pct,
            b.compute_pct,
            b.communication_pct,
            b.memory_pct,
            b.idle_pct,
            b.device
        )?;
    }
    left_out(out, &shown)?;

    writeln!(out, "\nCommunication overlapped by compute")?;
    writeln!(
        out,
        "{:>6} {:>12} {:>12} {:>10} {:>12}  device",
        "rank", "comm_ms", "overlap_ms", "overlap_%", "exposed_ms"
    )?;
    for b in r.breakdown.iter().filter(|b| shown.contains(&b.rank)) {
        writeln!(
            out,
            "{:>6} {:>12.3} {:>12.3} {:>10.2} {:>12.3}  {}",
            b.rank,
            b.communication_total_us / 1e3,
            b.overlap_us / 1e3,
            b.overlap_pct,
            b.exposed_communication_us / 1e3,
            b.device
        )?;
    }
    left_out(out, &shown)?;

    writeln!(
        out,
        "\nGPU idle gaps and what the host was doing meanwhile (time per cause)"
    )?;
    writeln!(
        out,
        "{:>6} {:>7} {:>11} {:>11} {:>13} {:>9} {:>11} {:>10}  device",
        "rank",
        "gaps",
        "total_ms",
        "longest_ms",
        "collective_ms",
        "sync_ms",
        "host_busy_ms",
        "unknown_ms"
    )?;
    for g in r.idle_gaps.iter().filter(|g| shown.contains(&g.rank)) {
        writeln!(
            out,
            "{:>6} {:>7} {:>11.3} {:>11.3} {:>13.3} {:>9.3} {:>11.3} {:>10.3}  {}",
            g.rank,
            g.count,
            g.total_us / 1e3,
            g.longest_us / 1e3,
            g.causes[0].2 / 1e3,
            g.causes[1].2 / 1e3,
            g.causes[2].2 / 1e3,
            g.causes[3].2 / 1e3,
            g.device
        )?;
    }
    left_out(out, &shown)?;
    if let Some(g) = r.idle_gaps.first() {
        let labels: Vec<&str> = g.histogram.iter().map(|h| h.0.as_str()).collect();
        writeln!(out, "gap lengths (count per bucket: {}):", labels.join(" "))?;
        for g in r.idle_gaps.iter().filter(|g| shown.contains(&g.rank)) {
            let counts: Vec<String> = g.histogram.iter().map(|h| h.1.to_string()).collect();
            writeln!(out, "{:>6}  {}  {}", g.rank, counts.join(" "), g.device)?;
        }
        left_out(out, &shown)?;
    }

    writeln!(
        out,
        "\nKernel launches (latency = kernel start - submitting call start)"
    )?;
    writeln!(
        out,
        "{:>6} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8} {:>8}  device",
        "rank",
        "kernels",
        "matched",
        "mean_us",
        "p50_us",
        "p95_us",
        "max_us",
        "short",
        "short_%",
        "time_%"
    )?;
    for l in r.launches.iter().filter(|l| shown.contains(&l.rank)) {
        writeln!(
            out,
            "{:>6} {:>9} {:>9} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>8} {:>8.2} {:>8.2}  {}",
            l.rank,
            l.kernels,
            l.with_flow,
            l.latency_mean_us,
            l.latency_p50_us,
            l.latency_p95_us,
            l.latency_max_us,
            l.short_kernels,
            l.short_launch_pct,
            l.short_time_pct,
            l.device
        )?;
    }
    left_out(out, &shown)?;
    writeln!(
        out,
        "(short: kernels under {} us)",
        r.options.short_kernel_ns as f64 / 1e3
    )?;

    writeln!(
        out,
        "\nHost ranges and the GPU time of the kernels they launched (all ranks)"
    )?;
    writeln!(
        out,
        "{:>10} {:>13} {:>13} {:>12}  range",
        "launches", "gpu_incl_ms", "gpu_self_ms", "host_ms"
    )?;
    for h in r.host_ranges.iter().take(TOP) {
        writeln!(
            out,
            "{:>10} {:>13.3} {:>13.3} {:>12.3}  {}",
            h.launches,
            h.gpu_inclusive_us / 1e3,
            h.gpu_self_us / 1e3,
            h.host_us / 1e3,
            h.name
        )?;
    }
    if !r.host_tree.is_empty() {
        writeln!(out, "\nOp -> kernel tree (depth {})", r.options.tree_depth)?;
        let mut prev: Vec<String> = Vec::new();
        for t in &r.host_tree {
            if t.path.is_empty() && prev.is_empty() && std::ptr::eq(t, &r.host_tree[0]) {
                writeln!(out, "(launched outside any host range)")?;
            }
            let common = prev.iter().zip(&t.path).take_while(|(a, b)| a == b).count();
            for (d, p) in t.path.iter().enumerate().skip(common) {
                writeln!(out, "{}{}", "  ".repeat(d), p)?;
            }
            writeln!(
                out,
                "{}{:.3} ms  {} x  {}",
                "  ".repeat(t.path.len().max(1)),
                t.gpu_us / 1e3,
                t.launches,
                t.kernel
            )?;
            prev = t.path.clone();
        }
    }

    writeln!(out, "\nCollectives across ranks (per type)")?;
    if r.collective_summary.is_empty() {
        writeln!(
            out,
            "(no oneCCL / MPI collective matched on two ranks or more)"
        )?;
    } else {
        writeln!(
            out,
            "{:>9} {:>12} {:>12} {:>13} {:>12} {:>14} {:>9} {:>10}  collective",
            "instances",
            "skew_mean_us",
            "skew_max_us",
            "transfer_us",
            "wait_ms",
            "bytes",
            "bus_GB/s",
            "last_most"
        )?;
        for c in &r.collective_summary {
            writeln!(
                out,
                "{:>9} {:>12.3} {:>12.3} {:>13.3} {:>12.3} {:>14} {:>9} {:>10}  {}",
                c.instances,
                c.skew_mean_us,
                c.skew_max_us,
                c.transfer_mean_us,
                c.wait_total_us / 1e3,
                c.bytes_total,
                c.bus_gbps_mean
                    .map_or("-".to_string(), |b| format!("{b:.2}")),
                c.most_often_last,
                c.name
            )?;
        }
        collective_instances(out, r)?;
    }
    writeln!(
        out,
        "\nStragglers (who arrived last, and the wait it caused)"
    )?;
    if !r.collectives.is_empty() {
        writeln!(
            out,
            "({} of {} matched collective calls line up across ranks: every rank ends after the last one starts)",
            r.collectives_consistent,
            r.collectives.len()
        )?;
    }
    writeln!(
        out,
        "{:>6} {:>12} {:>10} {:>12} {:>10} {:>12} {:>12} {:>12} {:>12}",
        "rank",
        "gpu_ms",
        "vs_median",
        "compute_ms",
        "vs_median",
        "comm_ms",
        "last/total",
        "caused_ms",
        "waited_ms"
    )?;
    for s in r.stragglers.iter().filter(|s| shown.contains(&s.rank)) {
        writeln!(
            out,
            "{:>6} {:>12.3} {:>+9.1}% {:>12.3} {:>+9.1}% {:>12.3} {:>12} {:>12.3} {:>12.3}",
            s.rank,
            s.gpu_time_us / 1e3,
            s.vs_median_pct,
            s.compute_us / 1e3,
            s.compute_vs_median_pct,
            s.communication_us / 1e3,
            format!("{}/{}", s.arrived_last, s.collectives),
            s.wait_caused_us / 1e3,
            s.own_wait_us / 1e3
        )?;
    }
    left_out(out, &shown)?;

    writeln!(out, "\nKernel time by category (all ranks)")?;
    writeln!(
        out,
        "{:>9} {:>12} {:>7} {:>10} {:>10} {:>10} {:>10}  category",
        "count", "total_ms", "share_%", "mean_us", "p50_us", "p95_us", "max_us"
    )?;
    for c in &r.categories {
        writeln!(
            out,
            "{:>9} {:>12.3} {:>7.2} {:>10.3} {:>10.3} {:>10.3} {:>10.3}  {}",
            c.count,
            c.total_us / 1e3,
            c.share_pct,
            c.mean_us,
            c.p50_us,
            c.p95_us,
            c.max_us,
            c.category
        )?;
    }
    writeln!(
        out,
        "\nTop kernels (all ranks; rank spread = min/median/max of the per-rank totals)"
    )?;
    writeln!(
        out,
        "{:>9} {:>12} {:>7} {:>10} {:>10} {:>10} {:>10}  {:>22}  kernel [category]",
        "count",
        "total_ms",
        "share_%",
        "mean_us",
        "p50_us",
        "p95_us",
        "max_us",
        "rank min/med/max ms"
    )?;
    for k in r.kernels.iter().take(TOP) {
        let spread = format!(
            "{}:{:.2}/{:.2}/{}:{:.2}",
            k.rank_min,
            k.rank_min_us / 1e3,
            k.rank_median_us / 1e3,
            k.rank_max,
            k.rank_max_us / 1e3
        );
        writeln!(
            out,
            "{:>9} {:>12.3} {:>7.2} {:>10.3} {:>10.3} {:>10.3} {:>10.3}  {:>22}  {} [{}]",
            k.count,
            k.total_us / 1e3,
            k.share_pct,
            k.mean_us,
            k.p50_us,
            k.p95_us,
            k.max_us,
            spread,
            k.name,
            k.category
        )?;
    }
    heatmap(out, r)?;
    if !r.truncated.is_empty() {
        // As long as a per-rank table at most: a job killed mid-run cuts
        // every rank's trace.
        let limit = rank_rows.unwrap_or(usize::MAX);
        writeln!(out, "\nTruncated inputs")?;
        for t in r.truncated.iter().take(limit) {
            writeln!(out, "rank {}: {}: {}", t.rank, t.file, t.problem)?;
        }
        if r.truncated.len() > limit {
            writeln!(
                out,
                "({} more truncated inputs not shown: --rank-rows all, or --json FILE)",
                r.truncated.len() - limit
            )?;
        }
    }
    Ok(())
}

/// Which ranks the per-rank tables show, when not all: how many, which
/// and why, and how to get them all.
fn shown_ranks(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    if !shown.is_capped() {
        return Ok(());
    }
    writeln!(
        out,
        "\nPer-rank tables show {} of {} ranks (every rank: --rank-rows all, or --csv DIR / --json FILE):",
        shown.shown(),
        shown.total
    )?;
    for (why, ranks) in &shown.picked {
        writeln!(out, "  {why}: {}", ranks.join(" "))?;
    }
    Ok(())
}

/// The line under a per-rank table that does not show every rank.
fn left_out(out: &mut impl Write, shown: &Shown) -> io::Result<()> {
    if shown.is_capped() {
        writeln!(
            out,
            "({} more ranks not shown: --rank-rows all)",
            shown.left_out()
        )?;
    }
    Ok(())
}

/// The instances with the largest start skew: who arrived last, what the
/// others waited, what moved (docs/tracestat.md#console-report).
fn collective_instances(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let mut worst: Vec<&crate::report::CollectiveInstance> = r.collectives.iter().collect();
    // Largest skew first; ties in time order (the report's order).
    worst.sort_by(|a, b| b.skew_us.total_cmp(&a.skew_us));
    writeln!(
        out,
        "\nCollective instances with the largest skew ({} of {}; wait = sum of the ranks' waits for the last arrival)",
        worst.len().min(TOP),
        worst.len()
    )?;
    writeln!(
        out,
        "{:>6} {:>6} {:>11} {:>11} {:>6} {:>11} {:>12} {:>12} {:>9} {:>4}  collective",
        "n",
        "ranks",
        "start_ms",
        "skew_us",
        "last",
        "wait_ms",
        "duration_us",
        "bytes",
        "bus_GB/s",
        "ok"
    )?;
    for c in worst.into_iter().take(TOP) {
        let wait: f64 = c.waits_us.iter().map(|w| w.1).sum();
        writeln!(
            out,
            "{:>6} {:>6} {:>11.3} {:>11.3} {:>6} {:>11.3} {:>12.3} {:>12} {:>9} {:>4}  {}",
            c.occurrence,
            c.ranks,
            c.start_us / 1e3,
            c.skew_us,
            c.last_rank,
            wait / 1e3,
            c.duration_us,
            c.bytes.map_or("-".to_string(), |b| b.to_string()),
            c.bus_gbps.map_or("-".to_string(), |b| format!("{b:.2}")),
            if c.consistent { "yes" } else { "no" },
            c.name
        )?;
    }
    Ok(())
}

/// The rank x time heatmap as text: one line per rank (or group of ranks,
/// the straggler on its own line first, as on the HTML page), one
/// character per column of bins (docs/tracestat.md#console-report).
fn heatmap(out: &mut impl Write, r: &Report) -> io::Result<()> {
    let h = &r.heatmap;
    if h.rows.is_empty() || h.bins == 0 {
        return Ok(());
    }
    // `per` bins to a column (the last one may have fewer).
    let per = h.bins.div_ceil(HEAT_COLUMNS);
    let cols = h.bins.div_ceil(per);
    let labels: Vec<&str> = h.rows.iter().map(|(l, _)| l.as_str()).collect();
    let straggler = r.straggler.as_ref().map(|s| s.rank.as_str());
    let rows = crate::html::rows_with_straggler(&labels, HEAT_ROWS, straggler);
    let grid: Vec<Vec<f64>> = rows
        .iter()
        .map(|g| {
            (0..cols)
                .map(|c| {
                    let (b0, b1) = (c * per, ((c + 1) * per).min(h.bins));
                    let cells = (g.ranks.len() * (b1 - b0)).max(1) as f64;
                    g.ranks
                        .clone()
                        .flat_map(|i| h.rows[i].1[b0..b1].iter())
                        .sum::<f64>()
                        / cells
                })
                .collect()
        })
        .collect();
    // As on the HTML page, the scale ends at the busiest cell when no cell
    // is fully busy, so that a mostly idle run still shows its pattern.
    let scale = crate::html::heat_scale(grid.iter().flatten().copied().fold(0.0, f64::max));
    writeln!(
        out,
        "\nGPU utilisation over time (a column = {:.3} ms; ' ' idle, then .:-=+*#% to '@' {})",
        h.bin_us * per as f64 / 1e3,
        if scale == 1.0 {
            "fully busy".to_string()
        } else {
            format!("{:.3}% busy, the busiest cell", 100.0 * scale)
        }
    )?;
    let width = rows.iter().map(|g| g.label.len()).max().unwrap_or(0);
    for (g, values) in rows.iter().zip(&grid) {
        let mut line = String::with_capacity(cols);
        for &value in values {
            let u = value / scale;
            let level = (u * (HEAT_RAMP.len() - 1) as f64).round() as usize;
            // Any real activity shows ('.'), but not the sliver that the
            // fine grid spreads past a busy stretch's edge (a few tenths
            // of a percent of a column: docs/tracestat.md#heatmap).
            let level = if u >= 0.01 { level.max(1) } else { 0 };
            line.push(HEAT_RAMP[level.min(HEAT_RAMP.len() - 1)] as char);
        }
        writeln!(out, "{:>width$} |{line}|", g.label)?;
    }
    Ok(())
}
