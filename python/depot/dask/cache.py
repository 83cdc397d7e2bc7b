class Cache: pass
