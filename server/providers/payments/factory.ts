import type { Config } from '../../config';
import type { Db } from '../../db/client';
import { SandboxProvider } from './sandbox';
import type { PaymentProvider } from './types';
import { YookassaProvider } from './yookassa';

/** YooKassa when both credentials are configured, otherwise the sandbox checkout. */
export function createPaymentProvider(config: Config, db: Db): PaymentProvider {
  if (config.YOOKASSA_SHOP_ID && config.YOOKASSA_SECRET_KEY) {
    return new YookassaProvider({
      shopId: config.YOOKASSA_SHOP_ID,
      secretKey: config.YOOKASSA_SECRET_KEY,
      apiUrl: config.YOOKASSA_API_URL.replace(/\/+$/, ''),
      timeoutMs: config.YOOKASSA_TIMEOUT_MS,
      retries: config.YOOKASSA_RETRIES,
      receipts: config.YOOKASSA_RECEIPTS
        ? {
            vatCode: config.YOOKASSA_VAT_CODE,
            paymentSubject: config.YOOKASSA_PAYMENT_SUBJECT,
            paymentMode: config.YOOKASSA_PAYMENT_MODE,
          }
        : null,
    });
  }
  return new SandboxProvider(db, config.appUrl);
}
