import Foundation

/// The names a payload refers to, numbered in order of first use.
struct NameTable {
    private(set) var strings: [String] = []
    private var index: [String: Int] = [:]

    mutating func intern(_ s: String) -> Int {
        if let i = index[s] { return i }
        index[s] = strings.count
        strings.append(s)
        return strings.count - 1
    }
}
