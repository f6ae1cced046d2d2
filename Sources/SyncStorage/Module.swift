// The durable append-only record file shared by the client store and the server.
