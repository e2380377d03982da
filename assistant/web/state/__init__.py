"""What the app keeps between page loads and across workers: the conversation saved in the
browser (`session`), sealed on the server so the page never holds its key (`sealed`), and the
votes on answers (`feedback`, one append-only file shared by several worker processes)."""
