/// The server-side Lua script of ``RedisSink``: applies a batch of records atomically, each
/// only when its position is newer than the one stored with the object (or its tombstone),
/// and moves the pipeline's checkpoint key in the same call. Loaded once with `SCRIPT LOAD`
/// and called with `EVALSHA` (`EVAL` when the server answers `NOSCRIPT`, after a restart).
///
/// Calling convention: `KEYS[1]` is the checkpoint key, `KEYS[2…]` one object key per record.
/// `ARGV[1]` the format (`hash` or `json`), `ARGV[2]` the ttl in seconds (0: none),
/// `ARGV[3]` the channel (empty: none), `ARGV[4]` the tombstone's lifetime in seconds,
/// `ARGV[5]` the checkpoint position (the call's last record, or the position checkpointed).
/// Then per record: the operation (`c`, `u`, `d`, `r`), its position (`42.3`), and for `hash` the number of fields set and of
/// fields removed, the names and values set and the names removed; for `json` the object of
/// values to set as JSON text. Returns the number of records applied.
///
/// Every call moves the checkpoint key to its last record, so the key always holds the newest
/// position applied: an insert or delete beyond it is written without reading the object or
/// its tombstone (nothing stored can be newer while one pipeline writes under that key);
/// records at or before it, which only a redelivery brings, take the comparing path.
///
/// An object's position is the `_position` field of its hash (or member of its JSON object);
/// a delete removes the key and leaves `KEY:deleted` holding the delete's position for
/// ``RedisSink/tombstoneSeconds``, so an older insert redelivered within that time cannot
/// bring the object back; an update of an object not in Redis is skipped (the cache holds
/// whole objects only).
///
/// ```swift
/// let sha = try connection.command(["SCRIPT", "LOAD", RedisSinkScript.source]).text
/// ```
public enum RedisSinkScript {
    /// The Lua text.
    public static let source = """
    local function parse(p)
      local t, r, i = string.match(p, '^(%d+)%.(r?)(%d+)$')
      return tonumber(t), (r == 'r') and 1 or 0, tonumber(i)
    end
    local function newer(a, b)
      if not b then return true end
      local at, ar, ai = parse(a)
      local bt, br, bi = parse(b)
      if not bt then return true end
      if at ~= bt then return at > bt end
      if ar ~= br then return ar > br end
      return ai > bi
    end
    local json = ARGV[1] == 'json'
    local ttl = tonumber(ARGV[2])
    local channel = ARGV[3]
    local tombstone = tonumber(ARGV[4])
    local checkpointed = redis.call('GET', KEYS[1])
    -- A delete: the key goes, and its tombstone keeps the position (for `tombstone` seconds).
    local function remove(key, pos)
      redis.call('DEL', key)
      if tombstone > 0 then
        redis.call('SET', key .. ':deleted', pos, 'EX', tombstone)
      else
        redis.call('SET', key .. ':deleted', pos)
      end
    end
    local a = 6
    local applied = 0
    -- Positions rise within a call: once one is beyond the checkpoint, the rest are.
    local beyond = false
    for k = 2, #KEYS do
      local key = KEYS[k]
      local op, pos = ARGV[a], ARGV[a + 1]
      a = a + 2
      local nset, nremove, patch, first = 0, 0, nil, 0
      if json then
        patch = ARGV[a]
        a = a + 1
      else
        nset, nremove = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
        first = a + 2
        a = first + 2 * nset + nremove
      end
      if not beyond then beyond = newer(pos, checkpointed) end
      if op ~= 'u' and beyond then
        -- Beyond everything applied (one writer per checkpoint key): nothing stored is newer.
        if op == 'd' then
          remove(key, pos)
        else
          if json then
            local values = cjson.decode(patch)
            values['_position'] = pos
            redis.call('SET', key, cjson.encode(values))
          else
            redis.call('DEL', key)
            if nset > 0 then
              redis.call('HSET', key, '_position', pos, unpack(ARGV, first, first + 2 * nset - 1))
            else
              redis.call('HSET', key, '_position', pos)
            end
          end
          if ttl > 0 then redis.call('EXPIRE', key, ttl) end
        end
        if channel ~= '' then redis.call('PUBLISH', channel, key) end
        applied = applied + 1
      else
      local stored, doc
      if json then
        local text = redis.call('GET', key)
        if text then
          doc = cjson.decode(text)
          stored = doc['_position']
        end
      else
        stored = redis.call('HGET', key, '_position')
      end
      local apply = newer(pos, stored)
      local dead = false
      if apply and op ~= 'u' then
        dead = redis.call('GET', key .. ':deleted')
        if dead and not newer(pos, dead) then apply = false end
      end
      if apply and op == 'u' and not stored then apply = false end
      if apply then
        if op == 'd' then
          remove(key, pos)
        else
          if dead then redis.call('DEL', key .. ':deleted') end
          if json then
            local values = cjson.decode(patch)
            if op == 'u' then
              for name, value in pairs(values) do doc[name] = value end
              values = doc
            end
            values['_position'] = pos
            redis.call('SET', key, cjson.encode(values))
          else
            if op ~= 'u' and stored then redis.call('DEL', key) end
            if nset > 0 then
              redis.call('HSET', key, '_position', pos, unpack(ARGV, first, first + 2 * nset - 1))
            else
              redis.call('HSET', key, '_position', pos)
            end
            if nremove > 0 then
              redis.call('HDEL', key, unpack(ARGV, first + 2 * nset, first + 2 * nset + nremove - 1))
            end
          end
          if ttl > 0 then redis.call('EXPIRE', key, ttl) end
        end
        if channel ~= '' then redis.call('PUBLISH', channel, key) end
        applied = applied + 1
      end
      end
    end
    if ARGV[5] ~= '' and newer(ARGV[5], checkpointed) then redis.call('SET', KEYS[1], ARGV[5]) end
    return applied
    """
}
