//! The names one crate writes into a result and another reads back by name: facts
//! (`workload.facts` keys), table names (`Table.name`) and the columns a renderer looks up,
//! one module per area. The workload writes each with the constant, and the renderer, the
//! compare warnings or the command line read it with the same constant, so a rename is a
//! compile error instead of a report that silently prints zero.
//!
//! The strings are the public JSON contract (stored results keep them; the integration tests
//! spell them out on purpose): changing one is a schema change, not a refactoring. Names only
//! the workload itself reads stay in the workload's file. Figures have their own typed
//! definitions ([`FigureDef`](crate::result::FigureDef)): the defaults in
//! [`result::figure`](crate::result::figure), each workload's next to it.

/// The HTTP client (`http.load`: `hostbench http`, `ab`, `httperf`); its facts are read by
/// the ab, httperf and wrk layouts and by the `http` front-end.
pub mod http {
    /// Facts of an `http.load` run.
    pub mod fact {
        /// Responses received (any status).
        pub const RESPONSES: &str = "responses";
        /// Requests written to a connection.
        pub const REQUESTS_SENT: &str = "requests_sent";
        /// Bytes of one request as sent.
        pub const REQUEST_BYTES: &str = "request_bytes";
        /// Connections opened.
        pub const CONNECTIONS_OPENED: &str = "connections_opened";
        /// Connections that got at least one reply.
        pub const CONNECTIONS_WITH_REPLY: &str = "connections_with_reply";
        /// Replies on those connections.
        pub const REPLIES_ON_THOSE_CONNECTIONS: &str = "replies_on_those_connections";
        /// Most connections open at once.
        pub const MAX_OPEN_CONNECTIONS: &str = "max_open_connections";
        /// Connections the options asked for.
        pub const CONNECTIONS_REQUESTED: &str = "connections_requested";
        /// Responses that kept the connection alive.
        pub const KEEPALIVE_RESPONSES: &str = "keepalive_responses";
        /// Responses that allowed keep-alive (ab's "Keep-Alive requests").
        pub const KEEPALIVE_ALLOWED_RESPONSES: &str = "keepalive_allowed_responses";
        /// Header bytes received.
        pub const HEADER_BYTES: &str = "header_bytes";
        /// Body bytes received.
        pub const BODY_BYTES: &str = "body_bytes";
        /// Chunked-encoding footer bytes received.
        pub const FOOTER_BYTES: &str = "footer_bytes";
        /// Responses whose body length differed from the first (ab's "Length" failures).
        pub const LENGTH_FAILURES: &str = "length_failures";
        /// Responses with a status outside 2xx.
        pub const NON_2XX_RESPONSES: &str = "non_2xx_responses";
        /// Failed requests, every kind.
        pub const ERRORS: &str = "errors";
        /// Requests still in flight at the end.
        pub const UNFINISHED_REQUESTS: &str = "unfinished_requests";
        /// Open-loop sends that left later than scheduled.
        pub const LATE_SENDS: &str = "late_sends";
        /// The largest of those delays, ns.
        pub const MAX_SCHEDULE_LAG_NS: &str = "max_schedule_lag_ns";
        /// Requests sent again on a new connection.
        pub const RETRIED_REQUESTS: &str = "retried_requests";
        /// Most connections opened in one burst (httperf's "Maximum connect burst length").
        pub const MAX_CONNECT_BURST: &str = "max_connect_burst";
        /// The client's user CPU time, s.
        pub const CPU_USER_S: &str = "cpu_user_s";
        /// The client's system CPU time, s.
        pub const CPU_SYSTEM_S: &str = "cpu_system_s";
        /// The open-file limit the client ran with.
        pub const OPEN_FILE_LIMIT: &str = "open_file_limit";
        /// The port the requests went to.
        pub const TARGET_PORT: &str = "target_port";
        /// 1 when hostbench served the requests itself (`--url self`).
        pub const SELF_SERVER: &str = "self_server";
        /// 1 when the requests went over TLS.
        pub const TLS: &str = "tls";
        /// Full TLS handshakes.
        pub const TLS_FULL_HANDSHAKES: &str = "tls_full_handshakes";
        /// Resumed TLS handshakes.
        pub const TLS_RESUMED_HANDSHAKES: &str = "tls_resumed_handshakes";
        /// Body length of the first response (ab's "Document Length").
        pub const DOCUMENT_LENGTH: &str = "document_length";
        /// Sessions that completed (httperf `--wsess`).
        pub const SESSIONS_OK: &str = "sessions_ok";
        /// Sessions that failed.
        pub const SESSIONS_FAILED: &str = "sessions_failed";
        /// Mean lifetime of a completed session, s.
        pub const SESSION_LIFE_AVG_S: &str = "session_life_avg_s";
        /// Mean time until a failed session failed, s.
        pub const SESSION_FAILTIME_AVG_S: &str = "session_failtime_avg_s";
        /// CPUs the processes listening on the target port used on average (set by the
        /// command line from host activity, not by the workload).
        pub const LOCAL_SERVER_CPUS: &str = "local_server_cpus";

        /// Responses with a status of class `class` (1 to 5): `status_2xx`.
        pub fn status_class(class: usize) -> String {
            format!("status_{class}xx")
        }
    }

    /// Tables of an `http.load` run.
    pub mod table {
        /// Phases of each request (connect, waiting, processing, ...), ns.
        pub const TIMES: &str = "http_times";
        /// Responses by status code.
        pub const STATUS: &str = "http_status";
        /// Failed requests by kind.
        pub const ERRORS: &str = "http_errors";
        /// Sessions by calls answered (httperf `--wsess`).
        pub const SESSION_LENGTHS: &str = "http_session_lengths";
        /// Successful sessions per 5-second period.
        pub const SESSIONS_PER_5S: &str = "http_sessions_per_5s";
        /// The first TLS handshake's parameters.
        pub const TLS: &str = "http_tls";
        /// The Server header of the first response, and the port.
        pub const SERVER: &str = "http_server";
    }

    /// The `http_times` table: its columns and its rows (the phases of a request).
    pub mod times {
        /// Requests timed in the phase.
        pub const COUNT: &str = "count";
        /// Shortest, ns.
        pub const MIN_NS: &str = "min_ns";
        /// Mean, ns.
        pub const MEAN_NS: &str = "mean_ns";
        /// Standard deviation, ns.
        pub const SD_NS: &str = "sd_ns";
        /// Median, ns.
        pub const MEDIAN_NS: &str = "median_ns";
        /// Longest, ns.
        pub const MAX_NS: &str = "max_ns";
        /// The columns, in order.
        pub const COLUMNS: [&str; 6] = [COUNT, MIN_NS, MEAN_NS, SD_NS, MEDIAN_NS, MAX_NS];

        /// Row: connecting, per request (0 on a reused connection; ab's "Connect").
        pub const CONNECT: &str = "connect";
        /// Row: connecting, per new connection (httperf's `Connection time [ms]: connect`).
        pub const CONNECT_NEW: &str = "connect_new";
        /// Row: the TCP handshake alone (HTTPS).
        pub const TCP_CONNECT: &str = "tcp_connect";
        /// Row: the TLS handshake alone (HTTPS).
        pub const TLS_HANDSHAKE: &str = "tls_handshake";
        /// Row: request written to first response byte (ab's "Waiting").
        pub const WAITING: &str = "waiting";
        /// Row: request written to response complete (ab's "Processing").
        pub const PROCESSING: &str = "processing";
        /// Row: the whole request, connect included.
        pub const SERVICE: &str = "service";
        /// Row: first to last response byte (httperf's "transfer").
        pub const TRANSFER: &str = "transfer";
        /// Row: a connection's life (httperf's `Connection time [ms]`).
        pub const CONNECTION_LIFE: &str = "connection_life";
    }

    /// The `http_tls` table's rows are labelled `kind:value` (or `kind`); the kinds.
    pub mod tls_kind {
        /// The protocol version (`protocol:TLSv1.3`).
        pub const PROTOCOL: &str = "protocol";
        /// The cipher suite by OpenSSL's name, with its bits.
        pub const CIPHER: &str = "cipher";
        /// The certificate's key size, bits.
        pub const CERTIFICATE_KEY: &str = "certificate_key";
        /// The key exchange group, with its bits.
        pub const KEY_EXCHANGE: &str = "key_exchange";
        /// The SNI sent.
        pub const SERVER_NAME: &str = "server_name";
    }

    /// The column of the `http_errors` table (one row per kind of error).
    pub const ERRORS_COLUMN: &str = "errors";

    /// The kinds of failed request: the rows of the `http_errors` table.
    pub mod error {
        /// The connection was refused.
        pub const REFUSED: &str = "refused";
        /// The connection was reset (or the pipe broke).
        pub const RESET: &str = "reset";
        /// No answer within the timeout.
        pub const TIMEOUT: &str = "timeout";
        /// A response that is not HTTP.
        pub const BAD_RESPONSE: &str = "bad_response";
        /// The server closed the connection before the response ended.
        pub const CLOSED: &str = "closed";
        /// No file descriptor left.
        pub const FD_UNAVAIL: &str = "fd_unavail";
        /// No local address (port) left.
        pub const ADDR_UNAVAIL: &str = "addr_unavail";
        /// Anything else.
        pub const OTHER: &str = "other";
        /// The server's certificate was refused.
        pub const TLS_CERTIFICATE: &str = "tls_certificate";
        /// Another TLS failure.
        pub const TLS: &str = "tls";
        /// Every kind, in the table's order.
        pub const ALL: [&str; 10] = [
            REFUSED,
            RESET,
            TIMEOUT,
            BAD_RESPONSE,
            CLOSED,
            FD_UNAVAIL,
            ADDR_UNAVAIL,
            OTHER,
            TLS_CERTIFICATE,
            TLS,
        ];
    }
}

/// STREAM (`stream`); read by STREAM's layout and CSV and the HTML report's kernel chart.
pub mod stream {
    /// Facts of a `stream` run.
    pub mod fact {
        /// Elements per array.
        pub const ARRAY_ELEMENTS: &str = "array_elements";
        /// Offset of the arrays, elements.
        pub const OFFSET_ELEMENTS: &str = "offset_elements";
        /// Bytes per element (8).
        pub const BYTES_PER_ELEMENT: &str = "bytes_per_element";
        /// Bytes per array.
        pub const ARRAY_BYTES: &str = "array_bytes";
        /// Bytes of the three arrays.
        pub const TOTAL_BYTES: &str = "total_bytes";
        /// Passes over the kernels asked for.
        pub const NTIMES: &str = "ntimes";
        /// Kernel passes timed.
        pub const PASSES: &str = "passes";
        /// Iterations over the four kernels.
        pub const ITERATIONS: &str = "iterations";
        /// Threads that took part.
        pub const THREADS_COUNTED: &str = "threads_counted";
        /// Threads pinned to a CPU.
        pub const THREADS_PINNED: &str = "threads_pinned";
        /// 1 when the non-temporal kernels ran.
        pub const NT_STORES: &str = "nt_stores";
        /// Width of the SIMD kernels, bits.
        pub const SIMD_BITS: &str = "simd_bits";
        /// 1 when huge pages were advised for the arrays.
        pub const HUGE_PAGES_ADVISED: &str = "huge_pages_advised";
        /// How the array size was chosen (`SizeRule` as a number).
        pub const SIZE_RULE: &str = "size_rule";
        /// Clock granularity STREAM measures, ns.
        pub const CLOCK_GRANULARITY_NS: &str = "clock_granularity_ns";
        /// STREAM's timing check, µs.
        pub const TIMING_CHECK_US: &str = "timing_check_us";
        /// The validation's tolerance.
        pub const EPSILON: &str = "epsilon";
        /// Last-level cache the host reports, bytes.
        pub const LLC_REPORTED_BYTES: &str = "llc_reported_bytes";
        /// Last-level cache the size rule used, bytes.
        pub const LLC_ASSUMED_BYTES: &str = "llc_assumed_bytes";
        /// Memory available when the size was chosen, bytes.
        pub const MEM_AVAILABLE_BYTES: &str = "mem_available_bytes";
        /// 1 when the arrays validated, 0 when not.
        pub const VALIDATED: &str = "validated";
        /// Per-array validation figures: [`per_array`]`(EXPECTED, "a")` is `expected_a`.
        pub const EXPECTED: &str = "expected";
        /// Mean absolute error of an array (see [`per_array`]).
        pub const AVG_ABS_ERROR: &str = "avg_abs_error";
        /// Mean relative error of an array (see [`per_array`]).
        pub const AVG_REL_ERROR: &str = "avg_rel_error";
        /// Elements of an array beyond the tolerance (see [`per_array`]).
        pub const ERROR_ELEMENTS: &str = "error_elements";

        /// The fact `what` (one of the per-array names above) of array `array` (`a`, `b`,
        /// `c`): `avg_rel_error_b`.
        pub fn per_array(what: &str, array: &str) -> String {
            format!("{what}_{array}")
        }
    }

    /// Tables of a `stream` run: one row per kernel.
    pub mod table {
        /// The kernels with regular stores.
        pub const STREAM: &str = "stream";
        /// The kernels with non-temporal stores (when they ran).
        pub const STREAM_NT: &str = "stream_nt";
    }

    /// Columns of both tables that other crates read.
    pub mod col {
        /// The best rate of the kernel, MB/s (MB = 10^6 B).
        pub const BEST_RATE_MB_PER_S: &str = "best_rate_mb_per_s";
        /// Mean time of one pass of the kernel, s.
        pub const AVG_TIME_S: &str = "avg_time_s";
        /// Shortest pass, s.
        pub const MIN_TIME_S: &str = "min_time_s";
        /// Longest pass, s.
        pub const MAX_TIME_S: &str = "max_time_s";
    }

    /// Every STREAM figure's name ends so: `triad_best_mb_per_s`, `copy_nt_best_mb_per_s`.
    pub const FIGURE_SUFFIX: &str = "_best_mb_per_s";
}

/// The memory latency ladder (`memlat`); read by its own front-end and the HTML report's
/// staircase.
pub mod memlat {
    /// Name of the result table (one row per working-set size).
    pub const TABLE: &str = "memlat";

    /// Names of the columns of the result table, in order.
    pub mod col {
        /// Working-set size, bytes.
        pub const SIZE_BYTES: &str = "size_bytes";
        /// Timed elapsed time / timed loads, ns.
        pub const NS_PER_LOAD: &str = "ns_per_load";
        /// Median over the timed chunks of each chunk's ns per load (robust to preemption).
        pub const MEDIAN_NS_PER_LOAD: &str = "median_ns_per_load";
        /// The fastest chunk's ns per load (what the hardware does when nothing disturbs it;
        /// tinymembench reports this best-of figure).
        pub const MIN_NS_PER_LOAD: &str = "min_ns_per_load";
        /// Timed loads.
        pub const LOADS: &str = "loads";
        /// Timed chunks (runner events) of this size.
        pub const CHUNKS: &str = "chunks";
    }

    /// Names of the facts the instance reports.
    pub mod fact {
        /// Bytes per chain slot (one pointer per line).
        pub const LINE_BYTES: &str = "line_bytes";
        /// Ladder points per doubling of the size.
        pub const STEPS_PER_DOUBLING: &str = "steps_per_doubling";
        /// Smallest size of the ladder, bytes (after rounding to whole lines).
        pub const MIN_SIZE_BYTES: &str = "min_size_bytes";
        /// Largest size of the ladder, bytes (after rounding to whole lines).
        pub const MAX_SIZE_BYTES: &str = "max_size_bytes";
        /// 1 when hostbench chose the largest size, 0 when the user gave it.
        pub const MAX_SIZE_AUTO: &str = "max_size_auto";
        /// Last-level cache as the host reports it, bytes.
        pub const LLC_REPORTED_BYTES: &str = "llc_reported_bytes";
        /// Level of that cache (3 for an L3).
        pub const LLC_LEVEL: &str = "llc_level";
        /// The last-level cache size the automatic max size was derived from, bytes.
        pub const LLC_ASSUMED_BYTES: &str = "llc_assumed_bytes";
        /// Automatic max size = this × the assumed last-level cache (before memory caps).
        pub const MAX_SIZE_LLC_FACTOR: &str = "max_size_llc_factor";
        /// Sizes in the ladder.
        pub const SIZES_PLANNED: &str = "sizes_planned";
        /// Sizes measured to the end.
        pub const SIZES_MEASURED: &str = "sizes_measured";
        /// 1 when huge pages were asked for.
        pub const HUGE_PAGES: &str = "huge_pages";
        /// Bytes of the buffer the kernel backed with huge pages (from /proc/self/smaps).
        pub const HUGE_PAGE_BYTES: &str = "huge_page_bytes";
        /// Bytes of the buffer the ladder touched.
        pub const TOUCHED_BYTES: &str = "touched_bytes";
        /// Target length of one timed chunk, ns.
        pub const CHUNK_TARGET_NS: &str = "chunk_target_ns";
    }
}

/// IOzone (`iozone`); read by IOzone's layouts.
pub mod iozone {
    /// Tables of an `iozone` run: one of the two.
    pub mod table {
        /// Single-stream results: kB/s per file size and record size.
        pub const SINGLE: &str = "iozone";
        /// Throughput mode (`-t`): one row per test.
        pub const THROUGHPUT: &str = "iozone_throughput";
        /// Single-stream CPU utilisation (`-+u`): CPU % per file size and record size.
        pub const CPU: &str = "iozone_cpu";
        /// Throughput mode with `-+u`: each child's CPU per test.
        pub const CHILDREN: &str = "iozone_children";
    }

    /// Columns of the two tables.
    pub mod col {
        /// File size, kB (both tables).
        pub const FILE_KB: &str = "file_kb";
        /// Record size, kB (both tables).
        pub const RECLEN_KB: &str = "reclen_kb";
        /// The single-stream table's result columns after those two, in IOzone's order
        /// (its 13 columns, then pwrite/pread and the vectored ones), kB/s.
        pub const PHASES: [&str; 21] = [
            "write",
            "rewrite",
            "read",
            "reread",
            "random_read",
            "random_write",
            "bkwd_read",
            "record_rewrite",
            "stride_read",
            "fwrite",
            "frewrite",
            "fread",
            "freread",
            "pwrite",
            "repwrite",
            "pread",
            "repread",
            "pwritev",
            "repwritev",
            "preadv",
            "repreadv",
        ];
        /// Throughput table: child processes (threads).
        pub const CHILDREN: &str = "children";
        /// Throughput table: the children's rates summed, kB/s.
        pub const CHILDREN_KB_PER_S: &str = "children_kb_per_s";
        /// Throughput table: the parent's view, kB/s.
        pub const PARENT_KB_PER_S: &str = "parent_kb_per_s";
        /// Throughput table: the slowest child, kB/s.
        pub const MIN_KB_PER_S: &str = "min_kb_per_s";
        /// Throughput table: the fastest child, kB/s.
        pub const MAX_KB_PER_S: &str = "max_kb_per_s";
        /// Throughput table: the mean child, kB/s.
        pub const AVG_KB_PER_S: &str = "avg_kb_per_s";
        /// Throughput table: the least any child moved by the stonewall, kB.
        pub const MIN_XFER_KB: &str = "min_xfer_kb";
        /// `-+u`: wall time of a test, s (throughput and children tables).
        pub const WALL_S: &str = "wall_s";
        /// `-+u`: CPU time of a test, s.
        pub const CPU_S: &str = "cpu_s";
        /// `-+u`: CPU time over wall time, % (the CPU table's cells too).
        pub const CPU_PERCENT: &str = "cpu_percent";
    }

    /// Facts of an `iozone` run that its layouts read.
    pub mod fact {
        /// Child processes (threads) of throughput mode.
        pub const CHILDREN: &str = "children";
    }
}

/// The small-files workload (`smallfiles`); read by its pass/fail line.
pub mod smallfiles {
    /// Name of the result table (one row per phase).
    pub const TABLE: &str = "smallfiles";

    /// Facts of a `smallfiles` run.
    pub mod fact {
        /// Seconds to create and read back every file (what `max_seconds` is checked against).
        pub const CREATE_READ_S: &str = "create_read_s";
        /// The limit the run is checked against, s.
        pub const MAX_SECONDS: &str = "max_seconds";
    }
}

/// The insert race (`insert-race`); read by its layout.
pub mod insert_race {
    /// The database server's line (version, TLS), when known.
    pub const SERVER_TABLE: &str = "insert_race_server";

    /// Facts of an `insert-race` run.
    pub mod fact {
        /// Rows that never arrived (a reconnect lost them).
        pub const ROWS_LOST: &str = "rows_lost";
    }
}

/// Every database workload (OLTP, insert-race); read by the comparison's TLS warning.
pub mod db {
    /// Facts every database workload reports.
    pub mod fact {
        /// 1 when the connections used TLS, 0 when not.
        pub const TLS: &str = "db_tls";
        /// The TLS version (1.2, 1.3) when known.
        pub const TLS_VERSION: &str = "db_tls_version";
    }
}
