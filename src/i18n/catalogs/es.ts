import type { Catalog } from '../catalog.ts'

/**
 * Spanish (español), addressing the reader as "usted".
 * @public loaded by catalogs/index.ts with `require`, which knip does not follow
 */
export const es: Catalog = {
  // The form page
  'page.title_error': 'Error en el formulario: {title}',
  'page.submit': 'Enviar respuesta',
  'page.asked_by': 'Solicitud de {sender}',
  'page.answer_by': 'Por favor, responda a más tardar el {deadline}',
  'page.closes_in': 'Tiempo restante para responder: {duration}.',
  'page.footer': 'Su respuesta solo llegará a quien le envió este enlace. Este formulario admite una sola respuesta.',
  'page.new_tab': '(se abre en una pestaña nueva)',
  'mark.required': '(obligatorio)',
  'mark.optional': '(opcional)',

  // Errors, as a 422 page shows them
  'summary.title': 'Hay algo que corregir',
  'error.prefix': 'Error:',
  'error.required.text': 'Escriba una respuesta',
  'error.required.textarea': 'Escriba una respuesta',
  'error.required.email': 'Escriba una dirección de correo electrónico',
  'error.required.number': 'Escriba un número',
  'error.required.date': 'Escriba una fecha',
  'error.required.select': 'Seleccione una opción',
  'error.required.select_multiple': 'Seleccione al menos una opción',
  'error.required.file': 'Elija un archivo',
  'error.unchecked': 'Marque la casilla para continuar',
  'error.too_short': {
    one: 'Escriba al menos {count} carácter',
    many: 'Escriba al menos {count} de caracteres',
    other: 'Escriba al menos {count} caracteres',
  },
  'error.too_long': {
    one: 'Escriba {count} carácter como máximo',
    many: 'Escriba {count} de caracteres como máximo',
    other: 'Escriba {count} caracteres como máximo',
  },
  'error.too_long_by': {
    one: '{limit}. Sobra {count} carácter',
    many: '{limit}. Sobran {count} de caracteres',
    other: '{limit}. Sobran {count} caracteres',
  },
  'answered.title': 'Ya respondido: {title}',
  'error.too_small': 'Escriba un número igual o mayor que {min}',
  'error.too_large': 'Escriba un número igual o menor que {max}',
  'error.step': 'Escriba un número en intervalos de {step}',
  'error.step_from': 'Escriba un número en intervalos de {step}, contando desde {min}',
  'error.invalid_format': 'Escriba la respuesta en el formato correcto',
  'error.invalid_format.text': 'Escriba la respuesta en una sola línea',
  'error.invalid_format.number': 'Escriba un número, por ejemplo, {example}',
  'error.pattern': 'Escriba la respuesta en el formato indicado',
  'error.email': 'Escriba una dirección de correo electrónico con el formato correcto, por ejemplo, nombre@example.com',
  'error.not_an_option': 'Seleccione una de las opciones',
  'error.not_unique': 'Seleccione cada opción una sola vez',
  'error.too_few_selected': {
    one: 'Seleccione al menos {count} opción',
    many: 'Seleccione al menos {count} de opciones',
    other: 'Seleccione al menos {count} opciones',
  },
  'error.too_many_selected': {
    one: 'Seleccione {count} opción como máximo',
    many: 'Seleccione {count} de opciones como máximo',
    other: 'Seleccione {count} opciones como máximo',
  },
  'error.date': 'Escriba una fecha que exista',
  'error.date_too_early': 'Elija una fecha igual o posterior al {date}',
  'error.date_too_late': 'Elija una fecha igual o anterior al {date}',
  'error.file_too_large': 'El archivo seleccionado no puede ocupar más de {size}',
  'error.file_type': 'El archivo seleccionado debe ser de uno de estos tipos: {types}',
  'error.control_character': 'Elimine de su respuesta el carácter invisible {character}',
  'error.invalid_encoding': 'No se ha podido leer su respuesta. Escríbala de nuevo',
  'error.invalid_value': 'Escriba una respuesta válida',

  // Hints under a label
  'hint.min_length': {
    one: 'Al menos {count} carácter.',
    many: 'Al menos {count} de caracteres.',
    other: 'Al menos {count} caracteres.',
  },
  'hint.max_length': {
    one: 'Hasta {count} carácter.',
    many: 'Hasta {count} de caracteres.',
    other: 'Hasta {count} caracteres.',
  },
  'hint.length_between': {
    one: 'De {min} a {count} carácter.',
    many: 'De {min} a {count} de caracteres.',
    other: 'De {min} a {count} caracteres.',
  },
  'hint.number_between': 'Un número de {min} a {max}.',
  'hint.number_min': 'Un número igual o mayor que {min}.',
  'hint.number_max': 'Un número igual o menor que {max}.',
  'hint.date_between': 'Una fecha del {min} al {max}.',
  'hint.date_min': 'Una fecha a partir del {min}.',
  'hint.date_max': 'Una fecha hasta el {max}, incluido.',
  'hint.date_on': 'Solo la fecha del {date}.',
  'date.day': 'Día',
  'date.month': 'Mes',
  'date.year': 'Año',
  'date.example': 'Por ejemplo, {example}',
  'date.missing_day': 'La fecha debe incluir un día',
  'date.missing_month': 'La fecha debe incluir un mes',
  'date.missing_year': 'La fecha debe incluir un año',
  'date.missing_day_month': 'La fecha debe incluir un día y un mes',
  'date.missing_day_year': 'La fecha debe incluir un día y un año',
  'date.missing_month_year': 'La fecha debe incluir un mes y un año',
  'date.not_real': 'Escriba una fecha que exista',
  'date.year_digits': 'El año debe tener 4 cifras',
  'date.on': 'La fecha debe ser el {date}',
  'hint.file_size': 'Tamaño máximo: {size}.',
  'hint.file_types': 'Tipos de archivo: {types}. Tamaño máximo: {size}.',
  'hint.select_any': 'Seleccione todas las opciones que correspondan.',
  'hint.select_at_least': {
    one: 'Seleccione al menos una opción.',
    many: 'Seleccione al menos {count} de opciones.',
    other: 'Seleccione al menos {count} opciones.',
  },
  'hint.select_at_most': {
    one: 'Seleccione una opción como máximo.',
    many: 'Seleccione {count} de opciones como máximo.',
    other: 'Seleccione {count} opciones como máximo.',
  },
  'hint.select_exactly': {
    one: 'Seleccione una opción.',
    many: 'Seleccione {count} de opciones.',
    other: 'Seleccione {count} opciones.',
  },
  'hint.select_between': 'Seleccione entre {min} y {max} opciones.',

  // Controls
  'select.placeholder': 'Elija una opción',
  'select.no_answer': 'Sin respuesta',
  'file.choose': 'Elegir un archivo',
  'file.none': 'No se ha elegido ningún archivo',
  'file.kept':
    'Ya ha añadido {name} ({size}). Se enviará con su respuesta, salvo que lo quite o elija otro archivo más abajo.',
  'file.remove': 'Quitar este archivo',
  'file.replace': 'No hace falta que lo vuelva a elegir. Si prefiere enviar otro archivo, elíjalo aquí.',
  'file.kind.image': 'imágenes',
  'file.kind.audio': 'archivos de audio',
  'file.kind.video': 'vídeos',
  'file.kind.text': 'archivos de texto',

  // After sending
  'receipt.title': 'Respuesta enviada: {title}',
  'receipt.heading': 'Su respuesta se ha enviado',
  'receipt.default_message': 'Gracias. No tiene que hacer nada más; puede cerrar esta página.',
  'receipt.sent_at': 'Enviada el {time}.',
  'receipt.what_you_sent': 'Resumen de su respuesta',
  'receipt.not_answered': 'Sin responder',
  'receipt.yes': 'Sí',
  'receipt.no': 'No',
  'receipt.file': '{name} ({size})',
  'answered.heading': 'Este formulario se ha respondido',
  'answered.at': 'La respuesta se envió el {time}.',
  'answered.default_message': 'No tiene que hacer nada más; puede cerrar esta página.',

  // Pages for every other outcome
  'status.answered.heading': 'Este formulario ya tiene una respuesta',
  'status.answered.message':
    'Un formulario admite una sola respuesta y este ya la tiene. Lo que acaba de enviar no se ha guardado.',
  'status.cancelled.heading': 'Este formulario se ha cancelado',
  'status.cancelled.message': 'Quien lo envió ya no necesita una respuesta, así que el formulario no admite ninguna.',
  'status.expired.heading': 'Este formulario ha caducado',
  'status.expired.message':
    'El plazo para responder ha terminado, así que el formulario ya no admite respuestas. Si aún quiere responder, pida un enlace nuevo a quien se lo envió.',
  'status.not_found.heading': 'Formulario no encontrado',
  'status.not_found.message':
    'No hay ningún formulario en esta dirección. Compruebe que el enlace esté completo. También es posible que el formulario se haya eliminado.',
  'status.cross_site.heading': 'Respuesta rechazada',
  'status.cross_site.message':
    'Esta respuesta se envió desde otro sitio web, así que no se ha aceptado. Abra el enlace que recibió y responda desde allí.',
  'status.rate_limited.heading': 'Demasiados intentos',
  'status.rate_limited.message':
    'En el último minuto han llegado demasiadas respuestas desde su dirección. Espere un momento y vuelva a intentarlo.',
  'status.too_large.heading': 'Envío demasiado grande',
  'status.too_large.message':
    'Lo que ha enviado supera el tamaño que admite este formulario. Elija archivos más pequeños y vuelva a intentarlo.',
  'status.too_large.limits': 'El archivo más grande que admite cada pregunta:',
  'status.too_large.file_limit': '{label}: hasta {size}',
  'status.too_slow.heading': 'El envío ha tardado demasiado',
  'status.too_slow.message':
    'Su respuesta llegó demasiado despacio y no se ha guardado, quizá por una mala conexión. Vuelva al formulario y envíela de nuevo.',
  'status.busy.heading': 'Servicio ocupado en este momento',
  'status.busy.message':
    'El servidor está demasiado ocupado para recibir su respuesta ahora mismo, así que no se ha guardado nada. Vuelva al formulario y envíela de nuevo dentro de un momento.',
  'status.unreadable.heading': 'Respuesta no legible',
  'status.unreadable.message':
    'Lo que ha llegado no se ha podido leer como una respuesta a este formulario. Vuelva al formulario y envíe la respuesta desde allí.',
  'status.error.heading': 'Se ha producido un error',
  'status.error.message': 'Es posible que su respuesta no se haya guardado. Vuelva a intentarlo dentro de un momento.',
  'status.retry_after': {
    one: 'Puede volver a intentarlo dentro de un segundo.',
    many: 'Puede volver a intentarlo dentro de {count} de segundos.',
    other: 'Puede volver a intentarlo dentro de {count} segundos.',
  },
  'status.back': 'Volver al formulario',
  'sent.heading': 'Lo que ha enviado',
  'sent.not_recorded': 'No se ha guardado nada de lo que ha enviado.',
  'sent.intro': 'Aquí tiene lo que ha enviado, para que pueda guardar una copia.',
  'sent.copy_label': 'Sus respuestas en texto',
  'sent.copy_hint': 'Seleccione todo el texto de este cuadro y cópielo.',
  'review.title': 'Revise sus respuestas – {title}',
  'review.heading': 'Revise sus respuestas antes de enviarlas',
  'review.change': 'Cambiar',
  'review.continue': 'Continuar',
  'review.send_heading': 'Envíe ahora su respuesta',
  'review.send_text': 'Una vez enviada, no podrá cambiar su respuesta.',
  'review.lapsed':
    'Sus respuestas no se han enviado. Las respuestas pendientes de revisión se guardan durante 1 hora, y ese tiempo ya ha pasado. Vuelva a rellenar el formulario.',
  'review.lapsed_kept':
    'Sus respuestas no se han enviado. Las respuestas pendientes de revisión se guardan durante 1 hora, y ese tiempo ya ha pasado. Sus respuestas aparecen a continuación: vuelva a adjuntar los archivos que hubiera y continúe.',
}
