"""An S3-compatible server a test owns: moto's standalone server (``ThreadedMotoServer``) in this
process on a free port, with one bucket of the test's, and the environment that points parity's
processes at it (``parity.settings.base.raw_storage``).

moto keeps its objects in this process, not in the server: a server stopped and started again on
the same port finds the bucket as it was, as a real one does after an outage.
"""

import time
import uuid
from dataclasses import dataclass, field

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError
from moto.server import ThreadedMotoServer

from tests.e2e.redis_server import free_port

START_SECONDS = 10
# moto accepts any credentials; boto3 must be given some.
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "parity-test", "AWS_SECRET_ACCESS_KEY": "parity-test"}
REGION = "us-east-1"


@dataclass
class OwnedBucket:
    bucket: str = field(default_factory=lambda: f"parity-raw-{uuid.uuid4().hex[:8]}")
    port: int = field(default_factory=free_port)
    server: ThreadedMotoServer | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """What a parity process needs to keep its raw files in this bucket."""
        return {
            "PARITY_S3_BUCKET": self.bucket,
            "PARITY_S3_ENDPOINT_URL": self.endpoint,
            "PARITY_S3_REGION": REGION,
            "PARITY_S3_ADDRESSING_STYLE": "path",
            # A stopped server refuses at once; short, so a test of an outage need not wait.
            "PARITY_S3_TIMEOUT_SECONDS": "2",
            **CREDENTIALS,
        }

    def start(self) -> None:
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=self.port, verbose=False)
        self.server.start()
        deadline = time.monotonic() + START_SECONDS
        while not self.answers():
            if time.monotonic() > deadline:
                raise AssertionError(f"moto's S3 server on port {self.port} did not answer")
            time.sleep(0.05)
        try:
            self.client().create_bucket(Bucket=self.bucket)
        except ClientError as exc:  # started again: the bucket outlived the server
            if exc.response["Error"]["Code"] != "BucketAlreadyOwnedByYou":
                raise

    def stop(self) -> None:
        """The bucket out of reach: the server stops and its port refuses connections."""
        if self.server is None:
            return
        self.server.stop()
        if self.server._server is not None:  # stop() leaves the socket listening
            self.server._server.server_close()
        self.server = None

    def answers(self) -> bool:
        try:
            self.client().list_buckets()
        except (BotoCoreError, ClientError):
            return False
        return True

    def client(self):
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            region_name=REGION,
            aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
            config=Config(retries={"max_attempts": 1}, connect_timeout=1, read_timeout=10),
        )

    def keys(self) -> set[str]:
        """Every object's key in the bucket."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=self.bucket)
        return {item["Key"] for page in pages for item in page.get("Contents", ())}

    def empty(self) -> None:
        client = self.client()
        for key in self.keys():
            client.delete_object(Bucket=self.bucket, Key=key)

    def read(self, key: str) -> bytes:
        return self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read()
