// Signing secrets in the Standard Webhooks form: `whsec_` and the base64 of 32 random bytes.
import { randomBytes } from "node:crypto";

export const newSigningSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
