"""Web code that several of parity's web packages share (the read API, the upload API, the
dashboard, the digest's pages), so that none of them imports another's internals."""
