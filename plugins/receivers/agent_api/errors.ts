// The agent server's coded errors (docs/errors.md). They are the plugin's own: the framework
// defines only its start-up codes and the Host guard's. The codes are wire values — clients match
// on them in the `x-error-code` header and the JSON body — so they never change.

import { createCodedError } from 'tracepipe/plugin';

export const ApiInvalidError = createCodedError('TP_ERR_API_INVALID', '%s', 422);
export const ApiUnauthorizedError = createCodedError('TP_ERR_API_UNAUTHORIZED', '%s', 401);
export const ApiForbiddenError = createCodedError('TP_ERR_API_FORBIDDEN', '%s', 403);
export const ApiCrossSiteError = createCodedError('TP_ERR_API_CROSS_SITE', '%s', 403);
export const ApiUnsupportedMediaTypeError = createCodedError('TP_ERR_API_UNSUPPORTED_MEDIA_TYPE', '%s', 415);
export const ApiAuthHandlerError = createCodedError('TP_ERR_API_AUTH_HANDLER', '%s', 500);
export const ApiNotFoundError = createCodedError('TP_ERR_API_NOT_FOUND', '%s', 404);
export const ApiMethodNotAllowedError = createCodedError('TP_ERR_API_METHOD_NOT_ALLOWED', '%s', 405);
export const ApiConflictError = createCodedError('TP_ERR_API_CONFLICT', '%s', 409);
export const ApiUpgradeRequiredError = createCodedError('TP_ERR_API_UPGRADE_REQUIRED', '%s', 426);
export const ApiMalformedJsonError = createCodedError(
  'TP_ERR_API_MALFORMED_JSON',
  'Request body is not valid JSON',
  400,
);
export const ApiGraphError = createCodedError('TP_ERR_API_GRAPH', '%s', 500);
export const ApiInternalError = createCodedError('TP_ERR_API_INTERNAL', 'Internal error: %s', 500);
export const ApiUnavailableError = createCodedError(
  'TP_ERR_API_UNAVAILABLE',
  'The database is unavailable; retry shortly (%s)',
  503,
);

/** Every code the agent server sends, for the documentation check. */
export const AGENT_API_ERROR_CODES = [
  ApiInvalidError,
  ApiUnauthorizedError,
  ApiForbiddenError,
  ApiCrossSiteError,
  ApiUnsupportedMediaTypeError,
  ApiAuthHandlerError,
  ApiNotFoundError,
  ApiMethodNotAllowedError,
  ApiConflictError,
  ApiUpgradeRequiredError,
  ApiMalformedJsonError,
  ApiGraphError,
  ApiInternalError,
  ApiUnavailableError,
].map((error) => error.code);
