"""Real clients the conformance tests run, each as its SDK's or framework's users write one
(README.md lists them). Each file is a script: `python tests/conformance_clients/NAME.py [MODE]`."""
