"""A memory itself: the file format, lenient reading, surgical patches, secrets, anchors, trust."""
