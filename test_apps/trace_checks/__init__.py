"""The assertions on the traces of the test apps, one module per family of
apps, each with the cases (app, arguments, how it is traced) of its apps:
capture (the basics and every way a process ends), exact (kernel arguments
and --exact), graphs, unified_memory, whatif, diagnosis, and
framework_allocators; base and analyses hold what they share.
test_apps/check_trace.py runs one case.
"""
