"""The local SQLite index: driver, database, FTS, change detection, channels, vectors, embedders."""
