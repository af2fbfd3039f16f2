"""snodo-tasks: the seed files the options and clauses cite, one path each at the commit read:
the stores (Memory, SQLite and its timestamps), the Store functions every call goes through
(their guards), and the values the stores validate."""

MEMORY = "extensions/tasks/lib/snodo/extensions/tasks/store/memory.ex@986ac838"
SQLITE = "extensions/tasks_sqlite/lib/snodo/extensions/tasks/store/sqlite.ex@50c2cd0e"
DETS = "extensions/tasks/lib/snodo/extensions/tasks/store/dets.ex@9a3dff4d"
DETS_TEST = "extensions/tasks/test/tasks_durable_store_test.exs@84bf1943"
TIMESTAMP = "extensions/tasks_sqlite/lib/snodo/extensions/tasks/store/sqlite/timestamp.ex@84bf1943"
STORE = "extensions/tasks/lib/snodo/extensions/tasks/store.ex@098b4783"
TASK = "extensions/tasks/lib/snodo/extensions/tasks/task.ex@c924739c"
WORK = "extensions/tasks/lib/snodo/extensions/tasks/work.ex@84bf1943"
RETRY_POLICY = "extensions/tasks/lib/snodo/extensions/tasks/retry_policy.ex@c924739c"
EVENT = "extensions/tasks/lib/snodo/extensions/tasks/event.ex@c924739c"
SNAPSHOT = "extensions/tasks/lib/snodo/extensions/tasks/snapshot.ex@84bf1943"
JSON_VALUE = "lib/snodo/json_value.ex@78304a5a"
