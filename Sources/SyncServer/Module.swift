// The reference sync server.
