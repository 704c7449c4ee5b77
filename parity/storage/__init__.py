"""How rows are kept, below every writer and above the models: the day partitions of results
and file seconds (``partitions``), created ahead by beat and by the writer before it writes, and
leases (``leases``): a job one worker runs at a time, by a row rather than a session lock.

The writer, the services and the tasks use them; they import only the models and
``parity.pure``. (The raw uploads' files are ``parity.raw_storage``, infrastructure.)"""
