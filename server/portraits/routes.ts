import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { generatePortraitEndpoint } from '../../src/domain/api/portraits';
import { portraitMessages, UPLOAD_MAX_BYTES } from '../../src/domain/portraits';
import type { AuthService } from '../auth/service';
import { currentUser, requireUser } from '../auth/session';
import { AppError } from '../errors';
import { route } from '../http/contract-route';
import { disconnectSignal, watchDisconnect } from '../http/disconnect';
import { fileTooLarge } from '../uploads/image-upload';
import { spoolUpload } from '../uploads/spool';
import type { PortraitForm, PortraitService } from './service';

/**
 * The fields a portrait form has (SPEC section 7), with room for a few more: those the
 * contract's check then refuses by name, past these the parser refuses them unnamed.
 */
const FIELDS_LIMIT = 8;
/** 2000 characters of 4 UTF-8 bytes each, with room to spare. */
const FIELD_SIZE_LIMIT = 16 * 1024;
/**
 * Bytes of the file read past the 10MB limit, only to be counted for SPEC's "Current
 * size: x MB"; beyond this the request's declared length tells the size instead.
 */
const COUNT_PAST_LIMIT = 2 * 1024 * 1024;
/** A whole request: the file, the fields and the multipart framing. */
const REQUEST_LIMIT = UPLOAD_MAX_BYTES + COUNT_PAST_LIMIT;

/**
 * The portrait endpoint (SPEC section 7): multipart, one file at most. Only a
 * request that carries our Origin is served (a form post from anywhere else, or from no
 * browser at all, is refused before its body is read). The multipart parser is
 * registered for this route only; the form is checked against its contract once read
 * (PortraitService, parseForm), since Fastify validates no multipart body.
 */
export function portraitRoutes(
  app: FastifyInstance,
  deps: { auth: AuthService; portraits: PortraitService; appOrigin: string },
): void {
  const { auth, portraits, appOrigin } = deps;
  const guard = requireUser(auth);

  void app.register(async (scope) => {
    await scope.register(multipart, {
      limits: {
        files: 1,
        fields: FIELDS_LIMIT,
        parts: FIELDS_LIMIT + 1,
        fieldSize: FIELD_SIZE_LIMIT,
        fileSize: REQUEST_LIMIT,
        headerPairs: 50,
      },
      throwFileSizeLimit: false,
    });

    route(
      scope,
      generatePortraitEndpoint,
      {
        onRequest: [
          // The app-wide hook refuses a foreign Origin; this upload also refuses a missing one.
          async (request) => {
            if (request.headers.origin === undefined) {
              throw new AppError('ORIGIN_REQUIRED', 'Requests must come from the app: the Origin header is missing', {
                details: { expected: appOrigin },
              });
            }
          },
          // A client that goes away before the charge is not charged; after it the job goes on.
          watchDisconnect,
        ],
        preHandler: [
          guard,
          async (request) => {
            // A body declared far beyond the limit is refused unread.
            const declared = Number(request.headers['content-length'] ?? NaN);
            if (declared > REQUEST_LIMIT) throw fileTooLarge(declared);
          },
        ],
      },
      async (request) => {
        const user = currentUser(request);
        const form = await readForm(request);
        try {
          return await portraits.create(user, form, disconnectSignal(request));
        } finally {
          // The photo is never kept: its temporary file goes with the request.
          await form.file?.dispose();
        }
      },
    );
  });
}

/**
 * Reads the fields and the one file. The file is spooled to a temporary file up to the
 * 10MB limit (server/uploads/spool.ts); past it the bytes are only counted, so an upload
 * costs no memory. On a refusal here the file is removed at once.
 */
async function readForm(request: FastifyRequest): Promise<PortraitForm> {
  if (!request.isMultipart()) {
    throw new AppError('VALIDATION_ERROR', portraitMessages.notMultipart, { details: { field: 'content-type' } });
  }
  const form: PortraitForm = { fields: {} };
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'user_image_file') {
          part.file.resume();
          throw new AppError('VALIDATION_ERROR', portraitMessages.tooManyFiles, { details: { field: part.fieldname } });
        }
        const spooled = await spoolUpload(part.file, UPLOAD_MAX_BYTES);
        // Past the counting limit the declared length is the best estimate of the size.
        const size = part.file.truncated
          ? Math.max(spooled.size, Number(request.headers['content-length'] ?? 0))
          : spooled.size;
        form.file = { ...spooled, size, fileName: part.filename };
      } else if (typeof part.value === 'string') {
        // A value cut at 16 KB is far past any limit, and is refused as such.
        form.fields[part.fieldname] = part.value;
      }
    }
  } catch (error) {
    await form.file?.dispose();
    throw multipartError(error);
  }
  return form;
}

function multipartError(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'FST_FILES_LIMIT') {
    return new AppError('UPLOAD_TOO_MANY_FILES', portraitMessages.tooManyFiles, { cause: error, details: { max: 1 } });
  }
  if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') {
    return new AppError('VALIDATION_ERROR', 'Too many form fields', { cause: error, details: { max: FIELDS_LIMIT } });
  }
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
    return new AppError('VALIDATION_ERROR', portraitMessages.notMultipart, { cause: error });
  }
  if (error instanceof Error && /multipart|boundary/i.test(error.message)) {
    return new AppError('VALIDATION_ERROR', 'The multipart body is malformed', { cause: error });
  }
  return error;
}
