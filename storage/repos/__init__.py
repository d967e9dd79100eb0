"""Tenant-scoped repositories, one per aggregate; reached through `storage.Tenant`."""
