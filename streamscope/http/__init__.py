"""HTTP plumbing the recorder and playback share, so neither imports the other: the
loopback server, the HTTP client packages a transport serves, the hop-by-hop rules."""
