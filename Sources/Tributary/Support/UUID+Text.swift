import Foundation

extension UUID {
    /// The UUID in lowercase, as store IDs and object URIs print it
    /// (`uuidString.lowercased()`, without formatting through `snprintf`: it is on the
    /// history and export hot paths).
    ///
    /// ```swift
    /// UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!.lowercasedString   // "6f9619ff-8b86-d011-b42d-00cf4fc964ff"
    /// ```
    public var lowercasedString: String {
        let hex: [UInt8] = Array("0123456789abcdef".utf8)
        var out = [UInt8](repeating: 0x2D, count: 36)
        var i = 0
        withUnsafeBytes(of: uuid) { bytes in
            for (n, byte) in bytes.enumerated() {
                if n == 4 || n == 6 || n == 8 || n == 10 { i += 1 }
                out[i] = hex[Int(byte >> 4)]
                out[i + 1] = hex[Int(byte & 0xF)]
                i += 2
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
