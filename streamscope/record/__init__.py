"""The recorder: a loopback reverse proxy that tees every exchange into a recording."""
