/**
 * A response body that is already JSON text, for callers that send it as is (HTTP): records read
 * as stored text are not parsed only to be serialized again. Other callers get plain objects.
 */
export class JsonText {
  readonly text: string;

  constructor(text: string) {
    this.text = text;
  }
}
