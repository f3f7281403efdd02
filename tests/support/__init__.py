"""What tests share: the simulated world, loopback receivers, warehouses built for reports,
and readers of what the product wrote. Tests import from here, never from another test."""
