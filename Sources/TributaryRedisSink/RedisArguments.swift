/// Command arguments written straight in the Redis protocol's form (RESP bulk strings,
/// `$LENGTH\r\nBYTES\r\n`), counted as they go: the Redis sink builds its script calls here
/// instead of an array of byte arrays per argument, and ``RedisConnection/append(_:after:)``
/// sends them with a prefix (the command name and its first arguments).
///
/// ```swift
/// var arguments = RedisArguments()
/// arguments.add("Post:1")
/// arguments.add("title")
/// redis.append(arguments, after: ["HSET"])
/// ```
public struct RedisArguments: Sendable {
    /// The arguments in protocol form.
    public private(set) var bytes: [UInt8] = []
    /// How many arguments were added.
    public private(set) var count = 0

    /// No arguments.
    ///
    /// ```swift
    /// var arguments = RedisArguments()
    /// ```
    public init() {}

    /// Removes every argument, keeping the buffer's capacity.
    ///
    /// ```swift
    /// arguments.removeAll()
    /// ```
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        count = 0
    }

    /// Adds a text argument.
    ///
    /// ```swift
    /// arguments.add("Post:1")
    /// ```
    public mutating func add(_ text: String) {
        var text = text
        text.withUTF8 { add($0) }
    }

    /// Adds an argument of any bytes.
    ///
    /// ```swift
    /// json.bytes.withUnsafeBufferPointer { arguments.add($0) }
    /// ```
    public mutating func add(_ argument: UnsafeBufferPointer<UInt8>) {
        bytes.append(0x24)
        Self.appendDigits(argument.count, to: &bytes)
        bytes.append(0x0D)
        bytes.append(0x0A)
        bytes.append(contentsOf: argument)
        bytes.append(0x0D)
        bytes.append(0x0A)
        count += 1
    }

    /// Adds an integer argument.
    ///
    /// ```swift
    /// arguments.add(3_600)
    /// ```
    public mutating func add(_ number: Int) {
        // The digits on the stack: no array per number.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = number.magnitude
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(0x30 + magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if number < 0 {
                start -= 1
                digits[start] = 0x2D
            }
            add(UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// Appends the arguments of `other` after these.
    ///
    /// ```swift
    /// keys.append(values)
    /// ```
    public mutating func append(_ other: RedisArguments) {
        bytes.append(contentsOf: other.bytes)
        count += other.count
    }

    /// Appends `number` in decimal.
    static func appendDigits(_ number: Int, to buffer: inout [UInt8]) {
        if number < 0 { buffer.append(0x2D) }
        let magnitude = number.magnitude
        var divisor: UInt = 1
        while divisor <= magnitude / 10 { divisor *= 10 }
        repeat {
            buffer.append(UInt8(0x30 + (magnitude / divisor) % 10))
            divisor /= 10
        } while divisor > 0
    }
}
