"""Every error leaves as ``{"error": "message"}`` with a 4xx status; bad input never 5xx."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError as PydanticError
from starlette.exceptions import HTTPException as StarletteHTTPException

from memloom.error_text import describe_validation
from memloom.errors import (
    ConfigError,
    ConflictStateError,
    DimensionError,
    EmbeddingError,
    NotFoundError,
    ReadOnlyError,
    StoreError,
    UnavailableError,
    ValidationError,
)

log = logging.getLogger("memloom.server")

NOT_JSON = "request body is not valid JSON"


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    # A message may quote the request (a path, a key); an unpaired surrogate in it
    # would make the error itself unencodable.
    safe = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return JSONResponse({"error": safe}, status_code=status, headers=headers)


def _describe(errors: list[Any]) -> str:
    return describe_validation(
        errors, hide=("body", "query", "path"), limit=10, empty="invalid request"
    )


def install(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _validation(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return error(400, NOT_JSON)
        if any(e.get("type") == "missing" and tuple(e.get("loc", ())) == ("body",) for e in errors):
            return error(422, "send a JSON body: this route needs one")
        return error(422, _describe(list(errors)))

    @app.exception_handler(PydanticError)
    async def _pydantic(_: Request, exc: PydanticError) -> JSONResponse:
        return error(422, _describe(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, UnicodeDecodeError):  # FastAPI's "error parsing the body"
            return error(400, f"{NOT_JSON} (it is not UTF-8)")
        return error(exc.status_code, str(exc.detail), getattr(exc, "headers", None))

    @app.exception_handler(NotFoundError)
    async def _not_found(_: Request, exc: NotFoundError) -> JSONResponse:
        return error(404, str(exc))

    @app.exception_handler(ConflictStateError)
    async def _conflict(_: Request, exc: ConflictStateError) -> JSONResponse:
        return error(409, str(exc))

    @app.exception_handler(DimensionError)
    async def _dimension(_: Request, exc: DimensionError) -> JSONResponse:
        return error(422, str(exc))

    @app.exception_handler(ValidationError)
    async def _invalid(_: Request, exc: ValidationError) -> JSONResponse:
        return error(400, str(exc))

    @app.exception_handler(ReadOnlyError)
    async def _read_only(_: Request, exc: ReadOnlyError) -> JSONResponse:
        return error(403, str(exc))

    @app.exception_handler(UnavailableError)
    async def _unavailable(_: Request, exc: UnavailableError) -> JSONResponse:
        return error(503, str(exc))

    @app.exception_handler(StoreError)
    async def _store(_: Request, exc: StoreError) -> JSONResponse:
        return error(400, str(exc))

    @app.exception_handler(ConfigError)
    async def _config(_: Request, exc: ConfigError) -> JSONResponse:
        return error(500, f"server configuration: {exc}")

    @app.exception_handler(EmbeddingError)
    async def _embedding(_: Request, exc: EmbeddingError) -> JSONResponse:
        return error(503, f"embedder unavailable: {exc}")

    @app.exception_handler(Exception)
    async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error")
        return error(500, "internal error (see the server log)")
