"""The documents: entry files (`entries`) and the chunks cut from them (`chunking`).

from knowledge.documents import load_entries, chunk_entries
"""

from knowledge.documents.chunking import Chunk, chunk_entries, chunk_text_file, source_files
from knowledge.documents.entries import BUILTIN_DOCS_DIR, Entry, EntryError, load_entries

__all__ = [
    "BUILTIN_DOCS_DIR",
    "Chunk",
    "Entry",
    "EntryError",
    "chunk_entries",
    "chunk_text_file",
    "load_entries",
    "source_files",
]
