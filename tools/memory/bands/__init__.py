"""The uncertainty band shown beside an estimate: from the published GPU runs per stack and
method (`published_band`, tools/data/memory_published_band.json) for GPU estimates, and from the
CPU calibration cases (`calibration`) for CPU ones."""
