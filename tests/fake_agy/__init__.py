"""The fake `agy` executable and the helpers the enrich tests share."""
