/** The protocols the package offers (each described in its own folder): a Worker not given one answers its paths how to serve it. */
import { A2A_OFFER } from "../a2a/server/offer.ts";
import { AG_UI_OFFER } from "./ag-ui/offer.ts";
import type { ProtocolOffer } from "./protocols.ts";

export const PACKAGE_PROTOCOLS: readonly ProtocolOffer[] = [A2A_OFFER, AG_UI_OFFER];
