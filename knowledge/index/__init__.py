"""The index on disk and in Chroma: versioned builds (`store`), the Chroma client and its bounded
calls (`chroma`, `collection`), shipped and cached vectors (`embcache`), guarded dense queries
(`dense`) and private copies of read-only stores (`scratch`)."""
