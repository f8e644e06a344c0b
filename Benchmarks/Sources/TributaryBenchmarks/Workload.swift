import Foundation

/// The blog posts every side inserts: row j is ("ext-j", "Post j", body, 1.7e9 + j).
enum Workload {
    /// 200,000, or `TRIBUTARY_BENCH_ROWS` (for profiling runs).
    static let rows = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_ROWS"].flatMap { Int($0) } ?? 200_000
    static let batch = 1_000

    static func externalID(_ j: Int) -> String { "ext-\(j)" }
    static func title(_ j: Int) -> String { "Post \(j)" }
    static func content(_ j: Int) -> String { "Body of post \(j) lorem ipsum dolor sit amet consectetur" }
    static func createdAt(_ j: Int) -> Double { 1.7e9 + Double(j) }

    /// The same table and indexes as Tributary's Post (blog model), for the baselines;
    /// `updatedAt` (derived, `now()`) with the column default Tributary gives it.
    static let schema = """
        CREATE TABLE "Post" ("_pk" INTEGER PRIMARY KEY, "_version" INTEGER NOT NULL DEFAULT 1, "title" TEXT, "content" TEXT, "externalID" TEXT, "createdAt" REAL, "updatedAt" REAL DEFAULT ((julianday('now') - 2440587.5) * 86400.0));
        CREATE UNIQUE INDEX "Post_unique_externalID" ON "Post" ("externalID");
        CREATE INDEX "Post_index_createdAt" ON "Post" ("createdAt");
        """
}
