"""Arrow Flight (quiver/flight.h): a client for any Flight service, and a
server for a directory of Arrow files.

    import quiver.flight
    srv = quiver.flight.serve("data", port=0)       # serving on a thread
    c = quiver.flight.connect(srv.uri)
    c.list()                                         # [FlightInfo dicts]
    reader = c.get("table.arrow")                    # __arrow_c_stream__
    c.put("copy.arrow", reader)                      # any __arrow_c_stream__ producer
    srv.stop()
"""
from . import _quiver

__all__ = ["connect", "serve", "Client", "Server", "FlightStream"]


class FlightStream:
    """The batches of a flight: an Arrow PyCapsule stream
    (``__arrow_c_stream__``), to be read once (pyarrow.RecordBatchReader.from_stream,
    quiver.write_stream, ...)."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __arrow_c_stream__(self, requested_schema=None):
        if requested_schema is not None:
            raise NotImplementedError("quiver.flight streams cannot be cast")
        if self._capsule is None:
            raise ValueError("the stream was handed out already")
        cap, self._capsule = self._capsule, None
        return cap


class Client:
    """A connection to a Flight service (use :func:`connect`)."""

    def __init__(self, uri, token=None, tls_ca=None, headers=None, timeout=None):
        pairs = list((headers or {}).items()) if isinstance(headers, dict) else list(headers or [])
        ms = 0 if timeout is None else max(1, int(timeout * 1000))
        self.uri = uri
        self._c = _quiver._flight_connect(uri, token, tls_ca, pairs, ms)

    def list(self):
        """Every flight: dicts with path, total_records, total_bytes, schema
        (IPC bytes) and tickets."""
        return _quiver._flight_list(self._c)

    def info(self, path):
        """GetFlightInfo of a path ("dir/file.arrow") as a dict."""
        return _quiver._flight_info(self._c, path)

    def get(self, path, parallel=0):
        """Every endpoint of the flight as one :class:`FlightStream`
        (``parallel`` > 1: that many endpoints fetched at once)."""
        return FlightStream(_quiver._flight_get(self._c, path, parallel))

    def put(self, path, obj):
        """Uploads ``obj`` (any Arrow PyCapsule producer, as
        :func:`quiver.write_stream` takes) as ``path``; returns the server's
        PutResults (bytes)."""
        from . import _arrow_stream_capsule
        stream = _arrow_stream_capsule(obj)
        if stream is None:
            raise TypeError("{} exports none of __arrow_c_device_stream__, __arrow_c_stream__, "
                            "__arrow_c_device_array__, __arrow_c_array__".format(type(obj).__name__))
        return _quiver._flight_put(self._c, path, stream)

    def action(self, type, body=b""):
        """DoAction: the Results' bodies (bytes)."""
        if isinstance(body, str):
            body = body.encode()
        return _quiver._flight_action(self._c, type, body)

    def close(self):
        self._c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(uri, token=None, tls_ca=None, headers=None, timeout=None):
    """A :class:`Client` of ``uri`` ("grpc://host:port", "grpc+tls://...");
    ``token`` is sent as ``authorization: Bearer``, ``tls_ca`` a PEM file,
    ``headers`` extra call headers, ``timeout`` seconds per call."""
    return Client(uri, token=token, tls_ca=tls_ca, headers=headers, timeout=timeout)


class Server:
    """The directory server, serving on a thread of its own (use :func:`serve`)."""

    def __init__(self, directory, host="127.0.0.1", port=0, token=None, allow_put=False):
        self._s = _quiver._flight_serve(str(directory), host, port, token, allow_put)
        self.port = _quiver._flight_server_port(self._s)
        self.uri = "grpc://{}:{}".format(host, self.port)

    def stop(self):
        """Ends every call and stops serving."""
        if self._s is not None:
            _quiver._flight_server_stop(self._s)
            self._s = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def serve(directory, port=0, host="127.0.0.1", token=None, allow_put=False):
    """Serves the Arrow files below ``directory`` (as ``quiver flight serve``)
    and returns the running :class:`Server` (``.uri``, ``.port``, ``.stop()``)."""
    return Server(directory, host=host, port=port, token=token, allow_put=allow_put)
