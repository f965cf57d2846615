"""Public status pages: components, public incidents and maintenance windows, and their public JSON."""
