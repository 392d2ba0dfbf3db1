"""The Parquet catalog: research data kept as plain, partitioned, typed Parquet files.

* ``layout``   where each resource lives (``RESOURCES``), frames to Arrow and back
* ``manifest`` the one JSON index, swapped atomically; the catalog's location (``Store``)
* ``write``    one partition as one content-addressed Parquet file
* ``read``     ``open_catalog`` / ``Catalog``: typed frames with the loaders' signatures
* ``sql``      ``Catalog.sql``: DuckDB views over the manifest's files (hive partitions)
* ``answer``   the loaders' recipes answered from a catalog (``qsc.connect(catalog=...)``)
* ``sync``     ``qsc.sync``: incremental, quota-aware fetching into a catalog
* ``integrity`` every file checked against the manifest: confined, size, footer, CRCs, hash
* ``repair``   what a sync does about damaged files (fetched again, dropped, redone)
* ``bundle_format``  the study bundle: one zip, its allowed members, ``Bundle``, ``BundleError``
* ``bundle_export``  ``qsc.export_bundle``: a catalog slice and a notebook as one file
* ``bundle_open``    ``qsc.verify_bundle`` / ``qsc.open_bundle``: checked, unpacked read-only
* ``distributed``  a study split across worker processes: one task per quant (``run_study``)
* ``cli``      ``quantscope sync``, ``quantscope catalog info``, ``quantscope bundle ...``

Users import ``open_catalog``, ``sync``, ``Catalog`` and the bundle functions from
``quantscope``. The whole package stands above the loaders (``sync`` runs them): the loaders
reach a catalog only through the source ``answer`` plugs into ``loaders._source`` when it is
imported, which this file does.
"""

from quantscope.catalog import answer as answer
