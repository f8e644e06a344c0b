extension Int64 {
    /// `value` rounded toward zero and held within `Int64`'s range: `Int64.max` for a larger
    /// value or infinity, `Int64.min` for a smaller one, and 0 for NaN. For numbers that come
    /// from input or from a store another program wrote (durations, times), where `Int64(_:)`
    /// would trap.
    ///
    /// ```swift
    /// Int64(saturating: 1e300)         // Int64.max
    /// Int64(saturating: .nan)          // 0
    /// Int64(saturating: 2.9 * 1000)    // 2900
    /// ```
    package init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= 0x1p63 {   // 2^63: Int64.max + 1, the first Double past Int64
            self = .max
        } else if value <= -0x1p63 {
            self = .min
        } else {
            self = Int64(value)
        }
    }
}

extension Int32 {
    /// `value` rounded toward zero and held within `Int32`'s range, 0 for NaN (see ``Swift/Int64/init(saturating:)``).
    package init(saturating value: Double) {
        self = Int32(clamping: Int64(saturating: value))
    }
}
