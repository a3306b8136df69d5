/** AG-UI as the package offers it: its path, named even where a Worker does not serve it (it answers how to). */
import type { ProtocolOffer } from "../protocols.ts";

export const AG_UI_PATH = "/v1/ag-ui";

export const AG_UI_OFFER: ProtocolOffer = { name: "ag-ui", paths: [AG_UI_PATH], said: "AG-UI", option: "agUi()" };
