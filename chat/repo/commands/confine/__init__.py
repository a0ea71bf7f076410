"""The walls of a sandboxed run, beside `commands.sandbox`: what of the machine it sees
(`hostview`), the toolchain its program needs (`toolchain`), its seccomp filter
(`seccomp`), its network (`netns`), and bubblewrap's start with them (`launch`)."""
