"""The review console: a small server-rendered web UI over the gateway's master-only RPCs."""
