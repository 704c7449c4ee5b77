from django.db import models


class Lease(models.Model):
    """A job that runs one at a time across workers (the issue sync) holds its row until
    ``held_until``. Unlike a session advisory lock it lives in a row, not in a connection, so it
    holds behind a transaction pooler (PgBouncer's transaction mode); and a worker that dies
    holding it lets it lapse at ``held_until`` instead of when Postgres notices the dead
    connection."""

    name = models.CharField(max_length=100, primary_key=True)
    held_until = models.DateTimeField()
    holder = models.CharField(max_length=200, blank=True, help_text="host:pid, for the log.")

    def __str__(self) -> str:
        return f"{self.name} (held by {self.holder or '-'} until {self.held_until:%H:%M:%S})"
