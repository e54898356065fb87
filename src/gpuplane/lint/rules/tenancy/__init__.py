"""Rules of category ``tenancy``: GPU quotas and priorities."""
