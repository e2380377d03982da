"""Cloud GPU instances: the typed catalog, provider billing terms, catalog files and imports.

`instances` defines `Instance` and the immutable `Catalog`, `providers` the billing terms of each
provider, `files` our own YAML/CSV catalog format (atomic writes), `skypilot_rows` and `skypilot`
the SkyPilot importer, and `store` the merged catalog a session ranks (built-in + saved imports).
"""
