import CSQLiteBench
import Foundation

// Every side of every ratio with the setting Tributary makes at its first open.
_ = bench_config_memstatus(0)

/// `TributaryBenchmarks [name-prefix…]`: runs the measurements whose names start with
/// one of the prefixes (all when none), printing one JSON line each.
let registry: [(names: [String], run: () throws -> [Measurement])] = [
    (["batch_insert_vs_raw", "batch_insert_vs_grdb"], StoreBenchmarks.batchInsert),
    (["fetch_vs_raw"], StoreBenchmarks.fetch),
    (["context_save_vs_raw"], ContextBenchmarks.save),
    (["fault_by_id_vs_raw"], ContextBenchmarks.faultByID),
    (["frc_update_vs_refetch"], FetchedResultsBenchmarks.update),
    (["history_overhead_batch", "history_overhead_single", "history_vs_grdb_batch", "history_overhead_batch_chain_off", "history_overhead_single_chain_off",
      "history_overhead_batch_chain_index_off", "history_overhead_single_chain_index_off"], HistoryBenchmarks.overhead),
    (["audit_verify_rate"], AuditBenchmarks.verifyRate),
    (["as_of_query_vs_fetch"], AuditBenchmarks.asOfVsFetch),
    (["object_timeline_ms"], AuditBenchmarks.objectTimeline),
    (["capture_foreign_insert_batch", "capture_foreign_update_batch", "capture_foreign_single"], CaptureBenchmarks.foreign),
    (["capture_fold_lag_p99_ms", "capture_fold_catch_up_ms"], CaptureLagBenchmarks.lag),
    (["diagnostic_capture_insert_log_only", "diagnostic_capture_insert_empty_probe"], CaptureBenchmarks.insertFloor),
    (["capture_foreign_bytes_per_change_ratio"], CaptureBenchmarks.bytesPerChange),
    (["capture_without_rowid_insert_batch", "capture_text_key_insert_batch", "own_without_rowid_insert_batch"], CaptureBenchmarks.withoutRowid),
    (["history_fetch_vs_scan", "history_bytes_per_change", "prune_writer_max_wait_ms"], HistoryBenchmarks.fetchAndPrune),
    (["diagnostic_dictionary_build_us_per_row"], StoreBenchmarks.dictionaryCost),
    (["diagnostic_tributary_fetch_only"], {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("f.sqlite").path
            _ = try TributaryBench.insertPosts(at: path)
            var total = 0.0
            for _ in 0..<20 { total += try TributaryBench.fetchPosts(at: path).1 }
            return [Measurement(name: "diagnostic_tributary_fetch_only", value: Double(Workload.rows * 20) / total, unit: "rows/s", goal: ">= 0")]
        }
    }),
    (["diagnostic_tributary_tracked_insert_only"], {
        let seconds = try HistoryBenchmarks.timedInsert(history: true, rows: Workload.rows, batch: Workload.batch)
        return [Measurement(name: "diagnostic_tributary_tracked_insert_only", value: Double(Workload.rows) / seconds, unit: "rows/s", goal: ">= 0")]
    }),
    (["diagnostic_history_decode_only"], {
        try Harness.withDirectory { dir in
            let coordinator = try TributaryBench.open(dir.appendingPathComponent("d.sqlite").path, history: true)
            try HistoryBenchmarks.insert(coordinator, rows: Workload.rows, batch: 1000, author: "importer")
            var decoded = 0
            let seconds = try Harness.time {
                for _ in 0..<10 {
                    try coordinator.enumerateHistory(.fetchHistory(after: nil)) { batch in for t in batch { decoded += t.changes.count } }
                }
            }
            return [Measurement(name: "diagnostic_history_decode_only", value: Double(decoded) / seconds, unit: "changes/s", goal: ">= 0")]
        }
    }),
    (["notify_in_process_p99_ms"], NotificationBenchmarks.inProcess),
    (["notify_cross_process_p50_ms", "notify_cross_process_p99_ms"], NotificationBenchmarks.crossProcess),
    (["idle_watcher_cpu_ms_per_min"], NotificationBenchmarks.idleWatcher),
    (["export_vs_zstd", "bytes_per_change", "bytes_per_change_dictionary"], StreamBenchmarks.exportVsZstd),
    (["replay_vs_batch_insert"], StreamBenchmarks.replayVsBatchInsert),
    (["export_peak_rss_mb", "replay_peak_rss_mb"], StreamBenchmarks.peakMemory),
    (["cli_import_vs_batch_insert"], ImportBenchmarks.cliVsBatchInsert),
    (["import_peak_rss_mb"], ImportBenchmarks.peakMemory),
    (["sink_fts_vs_bulk"], PipelineBenchmarks.ftsVsBulk),
    (["sink_http_vs_bulk", "sink_http_vs_direct"], PipelineBenchmarks.httpVsBulk),
    (["sink_fts_latency_p99_ms", "sink_http_latency_p99_ms"], PipelineBenchmarks.latency),
    (["sink_redis_vs_bulk"], RedisSinkBenchmarks.vsBulk),
    (["sink_redis_latency_p99_ms"], RedisSinkBenchmarks.latency),
    (["sink_nats_vs_bulk"], NATSSinkBenchmarks.vsBulk),
    (["sink_nats_latency_p99_ms"], NATSSinkBenchmarks.latency),
    (["sink_postgres_vs_bulk"], PostgresSinkBenchmarks.throughput),
    (["sink_postgres_latency_p99_ms"], PostgresSinkBenchmarks.latency),
    (["raw_vs_raw"], SelfCheckBenchmarks.rawVsRaw),
    (["grdb_vs_raw"], SelfCheckBenchmarks.grdbVsRaw),
    (["diagnostic_tributary_insert_only"], {
        let seconds = try Harness.withDirectory { try TributaryBench.insertPosts(at: $0.appendingPathComponent("p.sqlite").path) }
        return [Measurement(name: "diagnostic_tributary_insert_only", value: Double(Workload.rows) / seconds, unit: "rows/s", goal: ">= 0")]
    }),
]

// The second process of the cross-process notification benchmark.
if CommandLine.arguments.count == 3, CommandLine.arguments[1] == NotificationBenchmarks.writerFlag {
    do { try NotificationBenchmarks.writerProcess(CommandLine.arguments[2]) } catch {
        FileHandle.standardError.write(Data("notify writer failed: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "__stream_child" {
    // A child process of the stream memory benchmarks.
    do { try StreamBenchmarks.child(Array(CommandLine.arguments.dropFirst(2))) } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
    exit(0)
}

let prefixes = Array(CommandLine.arguments.dropFirst())
var failed = false
/// Harness self-checks run only when named, never by a bare `make bench`.
func selected(_ names: [String], by prefixes: [String]) -> Bool {
    if prefixes.isEmpty { return !names.allSatisfy(SelfCheckBenchmarks.names.contains) }
    return names.contains { name in prefixes.contains { name.hasPrefix($0) } }
}
for entry in registry where selected(entry.names, by: prefixes) {
    do {
        for measurement in try entry.run() {
            FileHandle.standardOutput.write(Data((measurement.jsonLine + "\n").utf8))
        }
    } catch {
        FileHandle.standardError.write(Data("benchmark \(entry.names.joined(separator: ", ")) failed: \(error)\n".utf8))
        failed = true
    }
}
exit(failed ? 1 : 0)
