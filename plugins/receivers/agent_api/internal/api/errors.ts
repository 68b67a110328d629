// The API's error constructors, so every route reports a missing id, a conflict or a bad body the
// same way: one of the plugin's coded errors (../../errors.ts), whose status the HTTP error handler
// sends, with the message.

import type { CodedError } from 'tracepipe/plugin';
import {
  ApiConflictError,
  ApiForbiddenError,
  ApiInvalidError,
  ApiNotFoundError,
  ApiUnauthorizedError,
} from '../../errors.ts';

export const notFound = (message: string): CodedError => new ApiNotFoundError([message]);
export const conflict = (message: string): CodedError => new ApiConflictError([message]);
export const invalid = (message: string): CodedError => new ApiInvalidError([message]);
export const unauthorized = (message: string): CodedError => new ApiUnauthorizedError([message]);
export const forbidden = (message: string): CodedError => new ApiForbiddenError([message]);
