"""The transform stage: dbt builds the raw loads into the marts (models/, macros/, seeds/)."""
