/// Where each object's change sits in the transaction being recorded: an
/// open-addressing table from (entity, primary key) to a segment index.
///
/// The recorder looks an object up for every captured row, so this replaces a
/// `Dictionary` whose SipHash was a tenth of the pre-update hook's time. Keys
/// are two integers, hashed by one multiplication; emptying the table between
/// transactions is O(1) (a generation stamp), so one large transaction does
/// not make every later small one pay for its capacity.
///
/// ```swift
/// var index = ObjectIndex()
/// index[entity: 0, key: 42] = 3
/// index[entity: 0, key: 42]   // 3
/// index.removeAll()
/// index[entity: 0, key: 42]   // nil
/// ```
struct ObjectIndex {
    private var keys: [Int64] = []
    private var entities: [Int32] = []
    /// The segment index, or -1 for a removed entry whose slot is kept for its key.
    private var values: [Int32] = []
    /// A slot is in use only when its stamp is the current generation.
    private var stamps: [UInt32] = []
    private var generation: UInt32 = 1
    private var used = 0
    private var mask = -1

    /// Empties the table, keeping its capacity.
    mutating func removeAll() {
        used = 0
        if generation == UInt32.max {
            for i in stamps.indices { stamps[i] = 0 }
            generation = 1
        } else {
            generation += 1
        }
    }

    /// The segment recorded for the object, or nil; setting nil removes it.
    subscript(entity entity: Int, key key: Int64) -> Int? {
        get {
            guard used > 0 else { return nil }
            var i = slot(entity, key)
            while stamps[i] == generation {
                if keys[i] == key && entities[i] == Int32(truncatingIfNeeded: entity) {
                    return values[i] < 0 ? nil : Int(values[i])
                }
                i = (i + 1) & mask
            }
            return nil
        }
        set {
            if newValue == nil && used == 0 { return }
            if (used + 1) * 2 > stamps.count { grow() }
            var i = slot(entity, key)
            while stamps[i] == generation {
                if keys[i] == key && entities[i] == Int32(truncatingIfNeeded: entity) {
                    values[i] = Int32(truncatingIfNeeded: newValue ?? -1)
                    return
                }
                i = (i + 1) & mask
            }
            guard let newValue else { return }
            stamps[i] = generation
            keys[i] = key
            entities[i] = Int32(truncatingIfNeeded: entity)
            values[i] = Int32(truncatingIfNeeded: newValue)
            used += 1
        }
    }

    private func slot(_ entity: Int, _ key: Int64) -> Int {
        let h = (UInt64(bitPattern: key) &+ UInt64(truncatingIfNeeded: entity) &* 0x51_7CC1_B727_220A) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: h >> 32) & mask
    }

    private mutating func grow() {
        let old = (keys, entities, values, stamps, generation)
        let capacity = max(64, stamps.count * 2)
        keys = Array(repeating: 0, count: capacity)
        entities = Array(repeating: 0, count: capacity)
        values = Array(repeating: -1, count: capacity)
        stamps = Array(repeating: 0, count: capacity)
        mask = capacity - 1
        generation = 1
        used = 0
        for i in old.3.indices where old.3[i] == old.4 && old.2[i] >= 0 {
            self[entity: Int(old.1[i]), key: old.0[i]] = Int(old.2[i])
        }
    }
}
