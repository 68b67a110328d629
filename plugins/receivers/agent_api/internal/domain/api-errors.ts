// The API's error constructors, so every route reports a missing id, a conflict or a bad body the
// same way: a coded TracepipeError whose status the HTTP error handler sends, with the message.

import { TracepipeError } from '../../../../../src/errors.ts';

export const notFound = (message: string): TracepipeError => new TracepipeError('TP_ERR_API_NOT_FOUND', [message]);
export const conflict = (message: string): TracepipeError => new TracepipeError('TP_ERR_API_CONFLICT', [message]);
export const invalid = (message: string): TracepipeError => new TracepipeError('TP_ERR_API_INVALID', [message]);
export const unauthorized = (message: string): TracepipeError =>
  new TracepipeError('TP_ERR_API_UNAUTHORIZED', [message]);
export const forbidden = (message: string): TracepipeError => new TracepipeError('TP_ERR_API_FORBIDDEN', [message]);
